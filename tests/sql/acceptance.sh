#!/bin/sh
# The shared Flink-derived acceptance cases (../shared/acceptance), when the checkout has them:
# every case must pass. Exit 77 (skip) where the shared folder is absent.
sluice="$1"
run="$(dirname "$0")/../../../shared/acceptance/run.py"
[ -f "$run" ] || { echo "no ../shared/acceptance here: skipped"; exit 77; }
exec python3 "$run" --sluice "$sluice" --timeout 60
