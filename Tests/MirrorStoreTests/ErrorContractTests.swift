// Only MirrorStore, as an app would import it: everything a store call can throw must be
// catchable, and its kind switchable, without `import MirrorStoreEngine`.
import Foundation
import MirrorStore
import Testing

private final class Note: Persistable {
    var identifier = 0
    var text = ""
    init() {}
    static var primaryKey: String? { "identifier" }
}

@Suite("Error contract")
struct ErrorContractTests {
    @Test("StorageError is caught and switched on with import MirrorStore alone")
    func storageErrorFromMirrorStoreAlone() throws {
        let path = NSTemporaryDirectory() + "mirrorstore-contract-" + UUID().uuidString + ".store"
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".lock")
        }
        let first = try Store(path: path, models: [Note.self])
        var caught: String?
        do {
            _ = try Store(path: path, models: [Note.self])
        } catch let error as StorageError {
            switch error.kind {
            case .alreadyOpenInProcess(let openPath):
                caught = openPath
            default:
                Issue.record("unexpected kind: \(error)")
            }
            #expect(error.description == "The store at '\(path)' is already open in this process; share the instance that has it open instead of opening it twice.")
        }
        #expect(caught == path)
        try first.close()

        do {
            try first.write { try $0.add(Note()) }
            Issue.record("a closed store wrote")
        } catch let error as StorageError {
            #expect(error.kind == .closed)
        }
    }

    @Test("the statistics' type and its compaction error are reachable too")
    func statistics() throws {
        let store = try Store.inMemory(models: [Note.self])
        let statistics: EngineStatistics = store.statistics
        let lastFailure: StorageError? = statistics.lastAutoCompactionError
        #expect(lastFailure == nil)
        #expect(statistics.compactions == 0)
    }

    @Test("the encryption kinds are switched on with import MirrorStore alone")
    func encryptionKinds() {
        let error = StorageError(.wrongKey(path: "/data/app.store"))
        switch error.kind {
        case .wrongKey(let path):
            #expect(path == "/data/app.store")
        case .emptyPassphrase, .invalidKeyLength, .encryptionFailed, .authenticationFailed, .nonceLimitReached:
            Issue.record("another encryption kind: \(error)")
        default:
            Issue.record("unexpected kind: \(error)")
        }
    }

    @Test("a full disk says the store was left as it was, not that a commit was rolled back")
    func diskFullMessage() {
        #expect(StorageError(.diskFull(path: "/data/app.store")).description
            == "The disk holding '/data/app.store' is full, so the write that needed the space failed and left the store as it was.")
    }
}
