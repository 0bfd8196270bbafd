#!/usr/bin/env bash
# Builds the MirrorStore documentation with the toolchain's own docc (no plugin dependency) and
# fails when a link is broken, the catalog has any other warning, or a public symbol declared in
# the package has no /// comment. The failure says which.
set -euo pipefail
cd "$(dirname "$0")/.."

DOCC="${DOCC:-$(dirname "$(command -v swift)")/docc}"
[ -x "$DOCC" ] || DOCC=/opt/swift/usr/bin/docc
WORK=.build-docs/docc
# The compiler writes a module's symbol graph only when it compiles the module, so the graphs
# live beside the build they describe and are kept between runs; the rest is rebuilt each time.
ALL_GRAPHS=.build-docs/symbol-graphs
rm -rf "$WORK"
mkdir -p "$WORK/graphs" "$ALL_GRAPHS"

# Symbol graphs hold public symbols only, as the compiler sees them.
build_graphs() {
    swift build --scratch-path .build-docs --target MirrorStore \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$ALL_GRAPHS"
}
build_graphs
if [ ! -f "$ALL_GRAPHS/MirrorStore.symbols.json" ]; then
    # A build that was up to date before the graphs directory existed: compile it once more.
    rm -rf .build-docs/debug/MirrorStore.build .build-docs/*/debug/MirrorStore.build
    build_graphs
fi
# MirrorStore's own graphs (and its extensions of other modules'), not the engine's: the engine
# types users see are re-exported into MirrorStore's graph.
cp "$ALL_GRAPHS"/MirrorStore.symbols.json "$ALL_GRAPHS"/MirrorStore@*.symbols.json "$WORK/graphs/"

if ! "$DOCC" convert Sources/MirrorStore/MirrorStore.docc \
    --additional-symbol-graph-dir "$WORK/graphs" \
    --fallback-display-name MirrorStore --fallback-bundle-identifier dev.mirrorstore.MirrorStore \
    --output-path "$WORK/MirrorStore.doccarchive" \
    --warnings-as-errors \
    --experimental-documentation-coverage --coverage-summary-level brief >"$WORK/convert.log" 2>&1; then
    cat "$WORK/convert.log" >&2
    echo "docs: docc reported the problems above (broken links or other warnings in doc comments or Sources/MirrorStore/MirrorStore.docc)." >&2
    exit 1
fi

# docc's coverage report counts documented symbols but does not fail; this does. Symbols without
# a source location (standard-library defaults such as Sequence.flatMap) are not ours to
# document, and members that witness a protocol requirement show the requirement's documentation.
python3 - "$WORK/graphs/MirrorStore.symbols.json" <<'PY'
import json, sys
graph = json.load(open(sys.argv[1]))
witnesses = {r["source"] for r in graph["relationships"]
             if r["kind"] in ("defaultImplementationOf", "requirementOf", "optionalRequirementOf", "overrides")}
missing = sorted(
    "/".join(symbol["pathComponents"]) + "  (" + symbol["location"]["uri"].split("/Sources/", 1)[-1]
    + ":" + str(symbol["location"]["position"]["line"] + 1) + ")"
    for symbol in graph["symbols"]
    if symbol.get("location") and not symbol.get("docComment")
    and symbol["identifier"]["precise"] not in witnesses
    and not symbol.get("sourceOrigin")
)
if missing:
    print("docs: these public symbols have no /// comment:", file=sys.stderr)
    for line in missing:
        print("  " + line, file=sys.stderr)
    sys.exit(1)
PY
echo "docs: built $WORK/MirrorStore.doccarchive; every public symbol is documented and every link resolves."
