#!/bin/sh
# The shared Flink-derived acceptance cases (../shared/acceptance), when the checkout has them:
# every case must pass. Exit 77 (skip) where the shared folder is absent.
sluice="$1"
run="$(dirname "$0")/../../../shared/acceptance/run.py"
if [ ! -f "$run" ]; then
	echo "SKIPPED, NOT RUN: the acceptance cases need ../shared/acceptance beside the" \
		"checkout (the project's Flink-derived cases); $run is not there" >&2
	exit 77
fi
exec python3 "$run" --sluice "$sluice" --timeout 60
