#!/usr/bin/env bash
# Counts the client's instructions (callgrind "Ir", every thread: tasks, event loops, the
# runtime) per operation of the PostgreSQL benchmark, MirrorStore beside hand-written postgres-nio:
#
#   bash Backends/MirrorStorePostgres/Scripts/with-postgres.sh \
#       bash Backends/MirrorStorePostgres/Scripts/callgrind-profile.sh [MODE…]   # default: store-query hand-query
#
# Each mode (see `--profile` in Sources/PostgresBenchmarks/Profile.swift) runs twice, with 0 and
# with $OPERATIONS operations after the same warm-up; the difference divided by $OPERATIONS is
# the count per operation. The first call fills the table, outside valgrind. Needs valgrind and
# the release build of mirrorstore-postgres-benchmarks.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
operations=${OPERATIONS:-400}
modes=("$@")
[ "${#modes[@]}" -gt 0 ] || modes=(store-query hand-query)
out="$here/.build/profile"
mkdir -p "$out"
# Valgrind 3.19 cannot read the DWARF 5 the toolchain emits: profile a copy without debug info.
objcopy --strip-debug "$here/.build/release/mirrorstore-postgres-benchmarks" "$out/mirrorstore-postgres-benchmarks"
binary="$out/mirrorstore-postgres-benchmarks"
"$binary" --profile none --operations 0
count() {
    valgrind --tool=callgrind --callgrind-out-file="$out/$1-$2.callgrind" "$binary" --profile "$1" --operations "$2" >/dev/null 2>&1
    callgrind_annotate "$out/$1-$2.callgrind" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
for mode in "${modes[@]}"; do
    base=$(count "$mode" 0)
    total=$(count "$mode" "$operations")
    echo "$mode: $(( (total - base) / operations )) instructions per operation ($operations operations)"
done
