// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "MirrorStore",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "MirrorStore", targets: ["MirrorStore"]),
        .executable(name: "mirrorstore", targets: ["MirrorStoreCLI"]),
        // The behaviour every `ModelStore` shares, for the backends' packages to run on their stores.
        .library(name: "MirrorStoreBehaviorSuite", targets: ["MirrorStoreBehaviorSuite"]),
    ],
    targets: [
        // C helpers: hardware CRC32C, the stack left, and the SEEK_DATA/SEEK_HOLE calls Glibc does not
        // export, for the engine; the runtime's class allocator, for models made without init().
        .target(name: "CMirrorStoreSupport"),
        // OpenSSL's libcrypto on Linux, for encryption at rest (libssl-dev): a system library, so
        // the package still declares no package dependency. Apple platforms use CryptoKit instead.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The storage engine: framed append-only log, index, recovery, compaction, locking.
        // It deals in type names, keys and bytes only, and knows nothing of reflection.
        .target(name: "MirrorStoreEngine", dependencies: [
            "CMirrorStoreSupport",
            .target(name: "CLibCrypto", condition: .when(platforms: [.linux])),
        ]),
        // Records, reflection mapping, record encoding and the Store API.
        .target(name: "MirrorStore", dependencies: ["MirrorStoreEngine", "CMirrorStoreSupport"]),
        .executableTarget(name: "MirrorStoreExample", dependencies: ["MirrorStore"]),
        // One behaviour suite for every `ModelStore`, as checks that throw on a mismatch: a test
        // target of another package cannot depend on this package's test targets, so it is a library.
        .target(name: "MirrorStoreBehaviorSuite", dependencies: ["MirrorStore", "MirrorStoreEngine", "TestSupport"]),
        // The `mirrorstore` inspector: inspect, verify, compact, dump.
        .executableTarget(name: "MirrorStoreCLI", dependencies: ["MirrorStore", "MirrorStoreEngine"]),
        // A child process for the kill -9 crash tests: commits and prints each acknowledged sequence.
        .executableTarget(name: "EngineCrashChild", dependencies: ["MirrorStoreEngine", "TestSupport"], path: "Tests/EngineCrashChild"),
        .executableTarget(name: "MigrationCrashChild", dependencies: ["MirrorStore", "TestSupport"], path: "Tests/MigrationCrashChild"),
        // MemberImportVisibility (SE-0444) hides members of modules a file does not import, so
        // ErrorContractTests, which imports MirrorStore only, proves StorageError's members are
        // reachable for apps that turn it on, and for the language mode that will make it the default.
        // What every test target shares: the seeded generator and temporary directories.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Fixtures are store files the tests copy by path: files made by earlier versions.
        .testTarget(name: "MirrorStoreTests", dependencies: ["MirrorStore", "MirrorStoreCLI", "MigrationCrashChild", "TestSupport", "MirrorStoreBehaviorSuite"],
                    exclude: ["Fixtures"],
                    swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]),
        .testTarget(name: "MirrorStoreEngineTests", dependencies: ["MirrorStoreEngine", "EngineCrashChild", "TestSupport"],
                    exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
