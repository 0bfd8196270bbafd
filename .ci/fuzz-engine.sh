#!/usr/bin/env bash
# Builds the libFuzzer target on the engine's log reader (Tests/Fuzz) and runs it.
# Not part of `swift test`. Usage: .ci/fuzz-engine.sh [seconds, default 120]
# The corpus is kept in fuzz-corpus/engine (git-ignored); crashes land in .build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-120}"
out=.build-fuzz
corpus=fuzz-corpus/engine
toolchain_bin="$(dirname "$(command -v swiftc)")"
clang="${CC:-$toolchain_bin/clang}"
mkdir -p "$out" "$corpus"

# Every C helper the engine calls (CRC32C, the stack left, holes).
support_objects=()
for source in Sources/CMirrorStoreSupport/*.c; do
    object="$out/$(basename "$source" .c).o"
    "$clang" -c -O1 -g -fsanitize=fuzzer-no-link,address \
        -I Sources/CMirrorStoreSupport/include "$source" -o "$object"
    support_objects+=("$object")
done

# One module: the engine's sources (its subfolders too) plus the entry point, so it can call the
# internal reader; libcrypto as the package links it on Linux (CLibCrypto).
engine_sources=()
while IFS= read -r source; do engine_sources+=("$source"); done < <(find Sources/MirrorStoreEngine -name '*.swift' | sort)
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name MirrorStoreEngine -package-name MirrorStore \
    -I Sources/CMirrorStoreSupport/include -I Sources/CLibCrypto \
    "${engine_sources[@]}" Tests/Fuzz/*.swift "${support_objects[@]}" -lcrypto \
    -o "$out/fuzz-engine"

"$out/fuzz-engine" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
    -artifact_prefix="$out/" -print_final_stats=1 "$corpus"
