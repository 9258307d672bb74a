#!/usr/bin/env bash
# A job file read from a pipe (`sluice run <(...)`, or /dev/stdin) has no size to read up
# to: it must run whole, not read as empty and exit 0 having done nothing. The same job
# from a pipe and from its file print the same rows.
#   job_from_pipe.sh SLUICE SOURCE_DIR
set -euo pipefail
sluice=$(realpath "$1")
cd "$2"
job=examples/sql/orders_per_customer_tumble.sql
want=$("$sluice" run "$job" --shards 1 2>/dev/null | sort)
got=$(cat "$job" | "$sluice" run /dev/stdin --shards 1 2>/dev/null | sort)
[ -n "$want" ] || { echo "the job printed no rows from its file" >&2; exit 1; }
if [ "$got" != "$want" ]; then
	echo "from a pipe: $(printf '%s\n' "$got" | grep -c .) rows, from the file:" \
		"$(printf '%s\n' "$want" | grep -c .)" >&2
	exit 1
fi
echo "ok: $(printf '%s\n' "$got" | grep -c .) rows from a pipe, as from the file"
