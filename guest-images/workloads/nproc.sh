#!/bin/sh
# Reports the vCPUs the guest brought up; tests compare it with -smp/--cpus.
echo "GUEST_NPROC=$(nproc)"
