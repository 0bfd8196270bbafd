// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so the library keeps no benchmark dependencies, and are
// always built in release: `swift run -c release --package-path Benchmarks mapping-benchmarks`,
// `... store-benchmarks`, `... query-benchmarks`, `... migration-benchmarks`,
// `... observation-benchmarks`, `... reader-benchmarks` and `... scale-benchmarks`.
let package = Package(
    name: "MirrorStoreBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "MirrorStore", path: ".."),
        // The store benchmarks' baseline: SQLite through GRDB 7's Codable records.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
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
        // glibc's malloc statistics (mallinfo2), which Swift's Glibc module does not export.
        .target(name: "CMallocStatistics"),
        // The store: MirrorStore and GRDB 7 (SQLite) on the same data in one run, each cell in a
        // child process of its own so its peak memory is its own.
        .executableTarget(
            name: "store-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                "CMallocStatistics",
                .product(name: "MirrorStore", package: "MirrorStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/StoreBenchmarks"),
        // Queries and secondary indexes: MirrorStore's Results against GRDB 7 with the same SQL
        // indexes, each cell in a child process of its own.
        .executableTarget(
            name: "query-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                "CMallocStatistics",
                .product(name: "MirrorStore", package: "MirrorStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/QueryBenchmarks"),
        // Migrating a store of 1,000,000 objects: time and peak memory, each run in a child
        // process of its own.
        .executableTarget(
            name: "migration-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MirrorStore", package: "MirrorStore"),
            ],
            path: "Sources/MigrationBenchmarks"),
        // Live results and the async API: observer latency, idle observers, concurrent tasks.
        .executableTarget(
            name: "observation-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MirrorStore", package: "MirrorStore"),
            ],
            path: "Sources/ObservationBenchmarks"),
        // Several processes on one store (issue 28): commit-to-observer latency across processes,
        // and lookups per second of reader processes beside a writer process.
        .executableTarget(
            name: "reader-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MirrorStore", package: "MirrorStore"),
            ],
            path: "Sources/ReaderBenchmarks"),
        // A store of 10,000,000 objects with two indexes (issue 26): created, reopened, queried,
        // compacted, migrated and verified, each step timed in a child process of its own.
        .executableTarget(
            name: "scale-benchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MirrorStore", package: "MirrorStore"),
            ],
            path: "Sources/ScaleBenchmarks"),
    ],
    swiftLanguageModes: [.v6]
)
