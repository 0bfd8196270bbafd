// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so the library keeps no benchmark dependencies, and are
// always built in release: `swift run -c release --package-path Benchmarks mapping-benchmarks`.
let package = Package(
    name: "MirrorStoreBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "MirrorStore", path: ".."),
    ],
    targets: [
        // The optimisation barrier, in its own module so the optimiser cannot see through it.
        .target(name: "BenchmarkSupport"),
        // Model ↔ record mapping: hand-written translators, MirrorStore, a naive Mirror walk and
        // Codable JSON, side by side in one run.
        .executableTarget(
            name: "mapping-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MirrorStore", package: "MirrorStore"),
            ],
            path: "Sources/MappingBenchmarks"),
    ],
    swiftLanguageModes: [.v6]
)
