// swift-tools-version: 6.1
import PackageDescription

// The PostgreSQL backend (issue 30) lives in its own package so the root package keeps no package
// dependencies: `swift test --package-path Backends/MirrorStorePostgres`, against a server that
// `Scripts/with-postgres.sh` starts (the tests skip themselves without one).
let package = Package(
    name: "MirrorStorePostgres",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "MirrorStorePostgres", targets: ["MirrorStorePostgres"]),
    ],
    dependencies: [
        .package(name: "MirrorStore", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Tables per model type, upserts in one SQL transaction, queries from MirrorStore's query tree.
        .target(name: "MirrorStorePostgres", dependencies: [
            .product(name: "MirrorStore", package: "MirrorStore"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        // MirrorStore on PostgreSQL against hand-written postgres-nio SQL for the same work:
        // `swift run -c release mirrorstore-postgres-benchmarks` beside `Scripts/with-postgres.sh`.
        .executableTarget(name: "mirrorstore-postgres-benchmarks", dependencies: [
            "MirrorStorePostgres",
            .product(name: "MirrorStore", package: "MirrorStore"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ], path: "Sources/PostgresBenchmarks"),
        // The models the multi-process test and its child processes share.
        .target(name: "PostgresChildModels", dependencies: [
            .product(name: "MirrorStore", package: "MirrorStore"),
        ], path: "Tests/PostgresChildModels"),
        // One of the processes of the multi-process test, writing through a store of its own.
        .executableTarget(name: "PostgresWriterChild", dependencies: [
            "MirrorStorePostgres",
            "PostgresChildModels",
            .product(name: "MirrorStore", package: "MirrorStore"),
        ], path: "Tests/PostgresWriterChild"),
        .testTarget(name: "MirrorStorePostgresTests", dependencies: [
            "MirrorStorePostgres",
            "PostgresWriterChild",
            "PostgresChildModels",
            .product(name: "MirrorStore", package: "MirrorStore"),
            // The behaviour every `ModelStore` shares, run here on PostgreSQL.
            .product(name: "MirrorStoreBehaviorSuite", package: "MirrorStore"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
