#!/usr/bin/env bash
# Counts the instructions (callgrind "Ir") one query cell executes per query, on the release build.
# Only the timed loop is counted (`timedPasses`: its first, untimed pass and the timed passes). The
# number of passes depends on how long the first one took, so it differs from run to run under
# valgrind: the count divides by the queries the cell reports, never by an assumed number.
#
#   Benchmarks/Scripts/callgrind-query.sh                         # equal/MirrorStore
#   Benchmarks/Scripts/callgrind-query.sh range/MirrorStore 30    # and the top 30 functions
#   ENCRYPTED=1 Benchmarks/Scripts/callgrind-query.sh             # the MirrorStore files encrypted
#   OPEN_OBJECTS=1000000 Benchmarks/Scripts/callgrind-query.sh first-screen/MirrorStore 40
#
# Needs valgrind, and the shared store in $DIRECTORY (default /tmp/mirrorstore-query-profile, or
# /tmp/mirrorstore-query-profile-encrypted with ENCRYPTED=1: the files have the same names), made
# on first use. The per-function list is inclusive: callees count in their callers. The open cells
# open a store of OPEN_OBJECTS customers (default 1000), built on first use; first-screen counts
# its timed part only (`timedFirstScreen`), on the main thread: what the open starts on another
# thread (OpenSSL's setup) is not in the count.
set -euo pipefail
cell=${1:-equal/MirrorStore}
top=${2:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
encrypted=()
[ "${ENCRYPTED:-0}" = 1 ] && encrypted=(--encrypted)
directory=${DIRECTORY:-/tmp/mirrorstore-query-profile${encrypted:+-encrypted}}
open_objects=${OPEN_OBJECTS:-1000}
out="$here/.build/profile"
mkdir -p "$out" "$directory"
# BINARY=PATH profiles that build of query-benchmarks (a copy kept from an earlier commit, to
# compare) instead of building this checkout's.
binary=${BINARY:-}
if [ -z "$binary" ]; then
    swift build -c release --disable-build-manifest-caching --package-path "$here" --product query-benchmarks >/dev/null
    binary="$here/.build/release/query-benchmarks"
fi
sizes=(--directory "$directory" --objects 100000 --open-objects "$open_objects" --seed 20261123 ${encrypted[@]+"${encrypted[@]}"})
case "$cell" in
    open*/* | first-screen*/* | first-query/*)
        # The open cells read only the store of OPEN_OBJECTS customers.
        if ! ls "$directory/customers-$open_objects.mirrorstore" >/dev/null 2>&1; then
            "$binary" --prepare MirrorStore --large --no-customers "${sizes[@]}" >/dev/null
        fi ;;
    *)
        if ! ls "$directory"/customers-100000.* "$directory"/members-100000.* >/dev/null 2>&1; then
            "$binary" --runs 1 --open-objects 1000 --filter / --directory "$directory" ${encrypted[@]+"${encrypted[@]}"} >/dev/null
        fi ;;
esac
if [[ "$cell" == event-* ]] && ! ls "$directory"/events-100000.* >/dev/null 2>&1; then
    "$binary" --runs 1 --shape events --filter / --directory "$directory" ${encrypted[@]+"${encrypted[@]}"} >/dev/null
fi
# Valgrind 3.19 cannot read the DWARF 5 the toolchain emits: profile a copy without debug info.
objcopy --strip-debug "$binary" "$out/query-benchmarks"
name=$(echo "$cell" | tr -c 'A-Za-z0-9-' '_')${encrypted:+encrypted}
valgrind --tool=callgrind --callgrind-out-file="$out/$name.callgrind" --collect-atstart=no \
    --toggle-collect='*timedPasses*' --toggle-collect='*commitBetweenQueries*' \
    --toggle-collect='*timedFirstScreen*' "$out/query-benchmarks" --child "$cell" "${sizes[@]}" >/dev/null 2>&1
# Every pass runs the same queries: the untimed first pass and the timed passes, counted by the
# calls timedPasses made to the pass closure, times the queries in one pass.
# The after-insert cell times a fixed number of queries, one per commit (not counted).
case "$cell" in equal/* | compound-equal/* | event-equal/*) pass=500 ;; range/* | count/* | event-range/*) pass=20 ;;
    first-20/* | insensitive-prefix/* | max/* | event-first-20/* | event-newest-20/*) pass=100 ;; event-kind/*) pass=200 ;;
    event-newest-20-category/*) pass=80 ;; scan/* | scan-*/*) pass=10 ;; *) pass=1 ;; esac
passes=$(callgrind_annotate --threshold=100 --tree=calling "$out/$name.callgrind" 2>/dev/null \
    | grep -A1 '\* .*timedPasses' | tail -n 1 | sed -n 's/.*(\([0-9,]*\)x).*/\1/p' | tr -d , || true)
[[ "$cell" == event-newest-20-after-insert/* ]] && passes=200
queries=$((${passes:-1} * pass))
total=$(callgrind_annotate "$out/$name.callgrind" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
echo "$cell: $total instructions for $queries queries = $((total / queries)) per query"
if [ "$top" -gt 0 ]; then
    callgrind_annotate --inclusive=yes "$out/$name.callgrind" 2>/dev/null \
        | awk -v n="$queries" '/^ *[0-9,]+ \(/ { ir = $1; gsub(",", "", ir); line = $0
              sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +(\?\?\?:)?/, "", line); sub(/ \[[^]]*\]$/, "", line)
              printf "%10d  %s\n", ir / n, line }' \
        | grep -v 'PROGRAM TOTALS\|libc-start\|below main\|query_benchmarks_main\|0x0000' \
        | swift demangle --simplified | cut -c1-200 | head -n "$top"
fi
