#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer (with LeakSanitizer) and ThreadSanitizer, each
# in its own build folder. Not part of .ci/run: together they take about ten minutes here.
set -euo pipefail
cd "$(dirname "$0")/.."
LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp:print_suppressions=0" \
    swift test --sanitize=address --scratch-path .build-asan
swift test --sanitize=thread --scratch-path .build-tsan
