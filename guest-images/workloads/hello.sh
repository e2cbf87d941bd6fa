#!/bin/sh
# Smallest workload: proves the console reaches userspace and exit status 0.
echo "hello from the gpin guest ($(uname -r))"
