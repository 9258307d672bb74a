#!/usr/bin/env bash
# README's "first job in C" as a C user meets it: `meson install` into a scratch root, then
# the one build command README gives (cc ... $(pkg-config --cflags --libs sluice)) on
# examples/first_job.c, run. README's code block must be that file, so neither drifts.
#   first_job.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
root=$(mktemp -d /tmp/sluice-install-XXXXXX)
trap 'rm -rf "$root"' EXIT

python3 - "$src/README.md" "$src/examples/first_job.c" <<'PY'
import sys
readme, example = open(sys.argv[1]).read(), open(sys.argv[2]).read()
section = readme.split("## A first job in C", 1)[1]
block = section.split("```c\n", 1)[1].split("```", 1)[0]
if block != example:
    sys.exit("README's first job in C is not examples/first_job.c: update one of them")
PY
command -v pkg-config >/dev/null || { echo "pkg-config is not installed" >&2; exit 1; }

meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
pc=$(find "$root" -name sluice.pc | head -1)
[ -n "$pc" ] || { echo "meson install wrote no sluice.pc" >&2; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
cd "$root"
cc -o first_job "$src/examples/first_job.c" $(pkg-config --cflags --libs sluice)
./first_job >out.txt 2>err.txt || { cat err.txt >&2; exit 1; }
grep -q '^+I\[' out.txt || { echo "first_job printed no window rows" >&2; head out.txt >&2; exit 1; }
grep -q '^late> +I\[' out.txt || { echo "first_job printed no late rows" >&2; exit 1; }
echo "installed, built with pkg-config, ran: $(grep -c '^+I\[' out.txt) window rows," \
	"$(grep -c '^late> ' out.txt) late rows"
