#!/usr/bin/env bash
# Counts the instructions (callgrind "Ir") that one store-benchmark cell executes per operation,
# on the release build, and lists the functions where they go. Only the timed work is counted
# (collection is on inside `measuredBody` only, not the resident-set reads around it), so
# building fixtures, warming up and verifying do not pollute the profile.
#
#   Benchmarks/Scripts/callgrind-store.sh lookup/MirrorStore           # per lookup
#   Benchmarks/Scripts/callgrind-store.sh fetch-all/GRDB 60 20000      # top 60, 20,000 objects
#   ENCRYPTED=1 Benchmarks/Scripts/callgrind-store.sh lookup/MirrorStore # the store encrypted
#   SHAPE=text Benchmarks/Scripts/callgrind-store.sh lookup/MirrorStore # another model (--shape)
#
# CELL is workload/system as `store-benchmarks --help` lists them (insert, fetch-all, lookup, commit,
# concurrent, open, open-cold; MirrorStore, GRDB, GRDB-read-each). Needs valgrind. Instruction
# counts do not depend on the machine's load; time spent waiting for the disk is not in them.
set -euo pipefail
cell=${1:?usage: callgrind-store.sh CELL [TOP] [OBJECTS]}
top=${2:-40}
objects=${3:-20000}
commits=200 open_objects=100000
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/.build/profile"
mkdir -p "$out"
# BINARY=PATH profiles that build of store-benchmarks (a copy kept from an earlier commit, to
# compare) instead of building this checkout's.
binary=${BINARY:-}
if [ -z "$binary" ]; then
    swift build -c release --disable-build-manifest-caching --package-path "$here" --product store-benchmarks >/dev/null
    binary="$here/.build/release/store-benchmarks"
fi
# Valgrind 3.19 cannot read the DWARF 5 the toolchain emits: profile a copy without debug info
# (symbols stay, so functions keep their names).
objcopy --strip-debug "$binary" "$out/store-benchmarks"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
sizes=(--objects "$objects" --commits "$commits" --open-objects "$open_objects")
# ENCRYPTED=1 profiles stores encrypted with a raw key (`--encrypted`).
[ "${ENCRYPTED:-0}" = 1 ] && sizes+=(--encrypted)
# SHAPE=NAME runs the cell on another model (`--shape`).
[ -n "${SHAPE:-}" ] && sizes+=(--shape "$SHAPE")
workload=${cell%%/*}
system=${cell#*/}
[ "$system" = GRDB-read-each ] && system=GRDB
case "$workload" in
    fetch-all | lookup) "$out/store-benchmarks" --prepare "$system" --small --directory "$scratch" "${sizes[@]}" >/dev/null ;;
    open | open-cold) "$out/store-benchmarks" --prepare "$system" --large --directory "$scratch" "${sizes[@]}" >/dev/null ;;
esac
case "$workload" in
    insert | fetch-all | lookup) operations=$objects unit=object ;;
    commit | concurrent) operations=$commits unit=commit ;;
    *) operations=1 unit=open ;;
esac
name=$(echo "$cell" | tr -c 'A-Za-z0-9-' '_')
valgrind --tool=callgrind --callgrind-out-file="$out/$name.callgrind" --collect-atstart=no \
    --toggle-collect='$s16store_benchmarks12measuredBody*' \
    "$out/store-benchmarks" --child "$cell" --directory "$scratch" "${sizes[@]}" >"$out/$name.log" 2>&1
total=$(callgrind_annotate "$out/$name.callgrind" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
echo "$cell: $total instructions for $operations operations = $(( total / operations )) per $unit"
per_operation() {
    awk -v n="$operations" '/^ *[0-9,]+ \(/ {
          ir = $1; gsub(",", "", ir); line = $0
          sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +(\?\?\?:)?/, "", line); sub(/ \[[^]]*\]$/, "", line)
          printf "%10d  %s\n", ir / n, line }' \
        | grep -v 'PROGRAM TOTALS\|0x0000\|libc-start\|below main\|store_benchmarks_main\| main()$' \
        | swift demangle --simplified \
        | cut -c1-220 | head -n "$top"
}
echo "inclusive instructions per $unit, by function (top $top):"
# `head` closes the pipe early: ignore the SIGPIPE that pipefail would turn into an exit.
callgrind_annotate --inclusive=yes "$out/$name.callgrind" 2>/dev/null | per_operation || true
echo
echo "self instructions per $unit, by function (top $top):"
callgrind_annotate "$out/$name.callgrind" 2>/dev/null | per_operation || true
