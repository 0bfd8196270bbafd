#!/usr/bin/env bash
# Runs the store benchmarks N times (default 3) for publication: each run starts only once the
# 1-minute load average is below MAX_LOAD (default 1.3), so other work on the machine (and the
# previous run's own fsync waits, which count in the load) has died down. Writes each run's
# report and samples to Benchmarks/Results/store-DATE-at-COMMIT-runK.{txt,json}, then prints the combined
# report: medians of the runs' medians, with the range over the runs.
#
#   Benchmarks/Scripts/store-runs.sh            # 3 runs
#   Benchmarks/Scripts/store-runs.sh 5 --runs 7 # 5 runs of 7 repetitions each
set -euo pipefail
count=${1:-3}
shift || true
max_load=${MAX_LOAD:-1.3}
here=$(cd "$(dirname "$0")/.." && pwd)
swift build -c release --disable-build-manifest-caching --package-path "$here" --product store-benchmarks >/dev/null
binary="$here/.build/release/store-benchmarks"
date=$(date -u +%Y-%m-%d)
commit=$(git -C "$here" rev-parse --short=7 HEAD)
mkdir -p "$here/Results"
files=()
for run in $(seq 1 "$count"); do
    for _ in $(seq 1 60); do
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$load" -v m="$max_load" 'BEGIN { exit !(l < m) }' && break
        echo "waiting for the load average ($load) to fall below $max_load…" >&2
        sleep 10
    done
    base="$here/Results/store-$date-at-$commit-run$run"
    "$binary" --json "$base.json" "$@" | tee "$base.txt"
    files+=("$base.json")
done
"$binary" --combine "${files[@]}" | tee "$here/Results/store-$date-at-$commit-combined.txt"
