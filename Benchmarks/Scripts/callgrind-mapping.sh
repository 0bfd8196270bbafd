#!/usr/bin/env bash
# Counts the instructions (callgrind "Ir") that one mapping cell executes per object, on the release
# build, and lists the functions where they go. Only the timed loops are counted (collection is on
# inside `measure` only), so fixture building and verification do not pollute the profile.
#
#   Benchmarks/Scripts/callgrind-mapping.sh "flat/MirrorStore/record"   # flat, record → model
#   Benchmarks/Scripts/callgrind-mapping.sh "nested/hand-written/model" # nested, model → record
#
# The filter is matched against "workload/implementation/direction". Needs valgrind.
set -euo pipefail
filter=${1:?usage: callgrind-mapping.sh FILTER [TOP]}
top=${2:-40}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/.build/profile"
mkdir -p "$out"
swift build -c release --disable-build-manifest-caching --package-path "$here" --product mapping-benchmarks >/dev/null
# Valgrind 3.19 cannot read the DWARF 5 the toolchain emits: profile a copy without debug info
# (symbols stay, so functions keep their names).
objcopy --strip-debug "$here/.build/release/mapping-benchmarks" "$out/mapping-benchmarks"
flat=1000 nested=100 runs=3 warmup=1
name=$(echo "$filter" | tr -c 'A-Za-z0-9-' '_')
valgrind --tool=callgrind --callgrind-out-file="$out/$name.callgrind" --collect-atstart=no \
    --toggle-collect='$s18mapping_benchmarks7measure*' \
    "$out/mapping-benchmarks" --flat-objects $flat --nested-objects $nested --runs $runs --warmup $warmup \
    --filter "$filter" >"$out/$name.log" 2>&1
total=$(callgrind_annotate "$out/$name.callgrind" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
case "$filter" in flat*) objects=$(( flat * (runs + warmup) )) ;; *) objects=$(( nested * (runs + warmup) )) ;; esac
echo "$filter: $total instructions for $objects objects = $(( total / objects )) per object"
echo "inclusive instructions per object, by function (top $top):"
callgrind_annotate --inclusive=yes "$out/$name.callgrind" 2>/dev/null \
    | awk -v n="$objects" '/^ *[0-9,]+ \(/ {
          ir = $1; gsub(",", "", ir); line = $0
          sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +(\?\?\?:)?/, "", line); sub(/ \[[^]]*\]$/, "", line)
          printf "%10d  %s\n", ir / n, line }' \
    | grep -v 'PROGRAM TOTALS\|libc-start\|below main\|mapping_benchmarks_main\|4mainyyKF\|7measure_4runs\|0x0000' \
    | swift demangle --simplified \
    | cut -c1-220 | head -n "$top"
