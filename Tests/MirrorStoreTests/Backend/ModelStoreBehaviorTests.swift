// The behaviour suite every `ModelStore` shares (Sources/MirrorStoreBehaviorSuite), on the file
// store, plain and encrypted, and the in-memory store; the PostgreSQL backend's tests run it on
// its store.
import Foundation
import MirrorStore
import MirrorStoreBehaviorSuite
import Testing
import TestSupport

/// The store's configuration for what the suite asks.
private func configuration(for opening: StoreOpening) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.schemaVersion = opening.schemaVersion
    if let migration = opening.migration {
        configuration.migration = { try migration($0, $1) }
    }
    return configuration
}

@Suite("ModelStore behaviour")
struct ModelStoreBehaviorTests {
    /// Files in a directory of the test's own: each place is a file, new for each `startsEmpty`.
    @Test(arguments: BehaviorCheck.cases(reopens: true))
    func fileStore(_ check: BehaviorCheck) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path
        defer { withExtendedLifetime(directory) {} }
        try await ModelStoreBehavior(reopens: true) { opening in
            try Store(path: path + "/" + opening.place, models: opening.models, configuration: configuration(for: opening))
        }.run(check)
    }

    /// The same files encrypted with a raw key (issue 27: everything holds encrypted).
    @Test(arguments: BehaviorCheck.cases(reopens: true))
    func encryptedFileStore(_ check: BehaviorCheck) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path
        defer { withExtendedLifetime(directory) {} }
        let key = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try await ModelStoreBehavior(reopens: true) { opening in
            var encrypted = configuration(for: opening)
            encrypted.encryption = .key(key)
            return try Store(path: path + "/" + opening.place, models: opening.models, configuration: encrypted)
        }.run(check)
    }

    /// A store in memory per opening: it keeps nothing to reopen, so the migrations do not apply.
    @Test(arguments: BehaviorCheck.cases(reopens: false))
    func inMemoryStore(_ check: BehaviorCheck) async throws {
        try await ModelStoreBehavior(reopens: false) { opening in
            try Store.inMemory(models: opening.models, configuration: configuration(for: opening))
        }.run(check)
    }
}
