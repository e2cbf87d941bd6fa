#!/bin/sh
# Proves a non-zero status travels through the exit device (expect 7).
echo "fail workload: exiting with 7"
exit 7
