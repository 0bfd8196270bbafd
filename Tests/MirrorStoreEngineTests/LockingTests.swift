import Foundation
import Testing
@testable import MirrorStoreEngine

@Suite struct LockingTests {
    @Test func aSecondProcessGetsLockedElsewhereWithThePid() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("locked.store")
        let holder = try ChildProcess(executable: child, mode: "hold", store: path)
        let ready = try #require(holder.waitForLine(startingWith: "ready"))
        #expect(ready == "ready \(holder.pid)")
        #expect(throws: StorageError(.lockedElsewhere(path: path, pid: holder.pid))) {
            try StorageEngine(path: path)
        }
        #expect(throws: StorageError(.lockedElsewhere(path: path, pid: holder.pid))) {
            try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
        }
        let description = StorageError(.lockedElsewhere(path: path, pid: holder.pid)).description
        #expect(description == "The store at '\(path)' is open in process \(holder.pid); close it there first.")
        holder.finish()
        #expect(holder.process.terminationStatus == 0)
        let engine = try StorageEngine(path: path)
        try engine.close()
    }

    @Test func theSameStoreTwiceInOneProcessIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("twice.store")
        let engine = try StorageEngine(path: path)
        #expect(throws: StorageError(.alreadyOpenInProcess(path: path))) { try StorageEngine(path: path) }
        // A different spelling of the same file is the same store.
        let respelled = directory.path + "/./twice.store"
        #expect(throws: StorageError(.alreadyOpenInProcess(path: respelled))) {
            try StorageEngine(path: respelled, configuration: EngineConfiguration(readOnly: true))
        }
        #expect(StorageError(.alreadyOpenInProcess(path: path)).description
            == "The store at '\(path)' is already open in this process; share the instance that has it open instead of opening it twice.")
        try engine.close()
        let again = try StorageEngine(path: path)
        try again.close()
    }

    @Test func droppingAnEngineWithoutClosingReleasesTheStore() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("dropped.store")
        do {
            _ = try StorageEngine(path: path)
        }
        let again = try StorageEngine(path: path)
        try again.close()
    }

    @Test func readOnlyNeverWrites() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 5, seed: 9)
        let path = directory.file("torn.store")
        let torn = Array(recorded.bytes.dropLast(3))
        try writeFile(path, torn)
        let engine = try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
        #expect(try StoreState(engine.snapshot()) == recorded.states[4])
        #expect(throws: StorageError(.readOnly)) { try engine.commit({ var b = WriteBatch(); b.deleteAll(type: "Hero"); return b }()) }
        #expect(throws: StorageError(.readOnly)) { try engine.compact() }
        try engine.close()
        #expect(try readFile(path) == torn)
    }
}
