#!/usr/bin/env bash
# Runs the query benchmarks N times (default 3) for publication: each run starts once the
# 1-minute load average is below MAX_LOAD (default 1.3), or after WAIT_ROUNDS checks 10 s apart
# (default 60), so other work on the machine has died down where it can. Writes each run's report
# to Benchmarks/Results/query-DATE-at-COMMIT-runK.txt (the library's commit, so a day's runs at
# different commits do not overwrite each other); the tables give the medians of each run.
#
#   Benchmarks/Scripts/query-runs.sh             # 3 runs of 5 repetitions
#   Benchmarks/Scripts/query-runs.sh 3 --runs 3  # 3 runs of 3 repetitions
#   SCRATCH=Benchmarks/.build-bench Benchmarks/Scripts/query-runs.sh
set -euo pipefail
count=${1:-3}
shift || true
max_load=${MAX_LOAD:-1.3}
wait_rounds=${WAIT_ROUNDS:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-$here/.build}
swift build -c release --disable-build-manifest-caching --package-path "$here" --scratch-path "$scratch" --product query-benchmarks >/dev/null
binary="$scratch/release/query-benchmarks"
date=$(date -u +%Y-%m-%d)
commit=$(git -C "$here" rev-parse --short=7 HEAD)
mkdir -p "$here/Results"
for run in $(seq 1 "$count"); do
    for _ in $(seq 1 "$wait_rounds"); do
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$load" -v m="$max_load" 'BEGIN { exit !(l < m) }' && break
        echo "waiting for the load average ($load) to fall below $max_load…" >&2
        sleep 10
    done
    "$binary" "$@" | tee "$here/Results/query-$date-at-$commit-run$run.txt"
done
