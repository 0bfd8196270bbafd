import Foundation
import Testing
import TestSupport
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

    /// A second writer waits its turn, up to `lockTimeout`: it gets the store once the first
    /// process closes it, and the same typed error as without waiting once the time is up.
    @Test func aSecondWriterWaitsItsTurnUpToItsTimeout() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("turn.store")
        let holder = try ChildProcess(executable: child, mode: "hold", store: path)
        _ = try #require(holder.waitForLine(startingWith: "ready"))
        var impatient = EngineConfiguration()
        impatient.lockTimeout = .milliseconds(300)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: StorageError(.lockedElsewhere(path: path, pid: holder.pid))) {
            try StorageEngine(path: path, configuration: impatient)
        }
        let waited = clock.now - start
        #expect(waited >= .milliseconds(300) && waited < .seconds(10), "waited \(waited)")

        // The holder dies (kill -9) while the patient writer waits: the kernel drops its locks.
        let pid = holder.pid
        let release = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            kill(pid, SIGKILL)
        }
        release.start()
        var patient = EngineConfiguration()
        patient.lockTimeout = .seconds(30)
        let engine = try StorageEngine(path: path, configuration: patient)
        holder.process.waitUntilExit()
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

    /// The lock file is found by name, so a store renamed while open, or whose lock file was
    /// deleted, would meet a new one: the store file's own lock keeps a second opener out.
    @Test func aRenamedStoreOrADeletedLockFileStillKeepsASecondProcessOut() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("held.store")
        let moved = directory.file("moved.store")
        let holder = try ChildProcess(executable: child, mode: "hold", store: path)
        _ = try #require(holder.waitForLine(startingWith: "ready"))
        #expect(rename(path, moved) == 0)
        for readOnly in [false, true] {
            #expect(throws: StorageError(.storeFileLocked(path: moved)), "read-only: \(readOnly)") {
                try StorageEngine(path: moved, configuration: EngineConfiguration(readOnly: readOnly))
            }
            // The old name keeps its lock file, still held.
            #expect(throws: StorageError(.lockedElsewhere(path: path, pid: holder.pid)), "read-only: \(readOnly)") {
                try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: readOnly))
            }
        }
        #expect(rename(moved, path) == 0)
        #expect(unlink(path + ".lock") == 0)
        #expect(throws: StorageError(.storeFileLocked(path: path))) { try StorageEngine(path: path) }
        #expect(throws: StorageError(.storeFileLocked(path: path))) {
            try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
        }
        #expect(StorageError(.storeFileLocked(path: path)).description
            == "The store file at '\(path)' is locked by another open of it, in this process or another, which may know it by the name it had before it was renamed; close that first.")
        holder.finish()
        #expect(holder.process.terminationStatus == 0)
        try StorageEngine(path: path).close()
    }

    /// In one process too, and after compaction has replaced the file: the lock moves with it.
    @Test func aRenamedStoreKeepsOneWriterInOneProcessAcrossCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("mine.store")
        let moved = directory.file("renamed.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        var batch = WriteBatch()
        batch.put(type: "Hero", key: .integer(1), value: [1])
        try engine.commit(batch)
        try engine.compact()
        #expect(rename(path, moved) == 0)
        // Compacting now would rename the new file over the old name, leaving the renamed file
        // behind unlocked: refused, and the store keeps taking commits in the renamed file.
        #expect(throws: StorageError(.storeFileMoved(path: path))) { try engine.compact() }
        #expect(!FileManager.default.fileExists(atPath: path) && !FileManager.default.fileExists(atPath: path + ".compact-tmp"))
        batch.put(type: "Hero", key: .integer(2), value: [2])
        try engine.commit(batch)
        #expect(throws: StorageError(.storeFileLocked(path: moved))) { try StorageEngine(path: moved) }
        #expect(throws: StorageError(.alreadyOpenInProcess(path: path))) { try StorageEngine(path: path) }
        #expect(unlink(moved + ".lock") == 0 || errno == ENOENT)
        #expect(throws: StorageError(.storeFileLocked(path: moved))) { try StorageEngine(path: moved) }
        // A snapshot outliving the engine keeps reading, but not the lock.
        let snapshot = engine.snapshot()
        try engine.close()
        let reopened = try StorageEngine(path: moved, configuration: fastConfiguration())
        #expect(try snapshot.value(type: "Hero", key: .integer(1)) == [1])
        #expect(try reopened.snapshot().value(type: "Hero", key: .integer(1)) == [1])
        #expect(try reopened.snapshot().value(type: "Hero", key: .integer(2)) == [2])
        try reopened.close()
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

/// Every name of one store file meets one lock: symbolic links (to the file or to a directory
/// on its path, dangling or not) and relative paths resolve to the same file; hard links,
/// which no path can see through, are refused.
@Suite struct FileIdentityTests {
    /// `directory/real.store`, with `alias.store` a symbolic link to it.
    struct Names {
        let directory = TemporaryDirectory()
        var real: String { directory.file("real.store") }
        var alias: String { directory.file("alias.store") }

        init() throws {
            try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: "real.store")
        }
    }

    /// `path` spelled relative to this process's working directory.
    static func relative(_ path: String) throws -> String {
        let here = try #require(realpath(FileManager.default.currentDirectoryPath, nil))
        defer { free(here) }
        let depth = String(cString: here).split(separator: "/").count
        return String(repeating: "../", count: depth) + path.drop(while: { $0 == "/" })
    }

    @Test func twoProcessesMeetOneLockThroughASymlinkOrARelativePath() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let names = try Names()
        for (held, opened, workingDirectory) in [
            (names.real, names.alias, nil), (names.alias, names.real, nil), ("real.store", names.alias, names.directory.path),
        ] {
            let holder = try ChildProcess(executable: child, mode: "hold", store: held, workingDirectory: workingDirectory)
            _ = try #require(holder.waitForLine(startingWith: "ready"))
            #expect(throws: StorageError(.lockedElsewhere(path: opened, pid: holder.pid)), "held as \(held)") {
                try StorageEngine(path: opened)
            }
            #expect(throws: StorageError(.lockedElsewhere(path: opened, pid: holder.pid)), "held as \(held)") {
                try StorageEngine(path: opened, configuration: EngineConfiguration(readOnly: true))
            }
            holder.finish()
            #expect(holder.process.terminationStatus == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: names.alias + ".lock"), "the lock lives beside the real file only")
    }

    @Test func oneProcessCannotOpenOneFileTwiceUnderAnotherName() throws {
        let names = try Names()
        let linkedDirectory = names.directory.file("linked")
        try FileManager.default.createSymbolicLink(atPath: linkedDirectory, withDestinationPath: names.directory.path)
        let engine = try StorageEngine(path: names.real)
        for other in [names.alias, try Self.relative(names.real), try Self.relative(names.alias), linkedDirectory + "/alias.store"] {
            #expect(throws: StorageError(.alreadyOpenInProcess(path: other))) { try StorageEngine(path: other) }
        }
        try engine.close()

        // A dangling link names the file that opening it creates.
        let dangling = names.directory.file("dangling.store")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "created.store")
        let created = try StorageEngine(path: dangling)
        #expect(FileManager.default.fileExists(atPath: names.directory.file("created.store")))
        #expect(throws: StorageError(.alreadyOpenInProcess(path: names.directory.file("created.store")))) {
            try StorageEngine(path: names.directory.file("created.store"))
        }
        try created.close()
    }

    /// Compaction renames its file over the real store, never over the link, which would
    /// otherwise become a separate file while the real one kept the old log.
    @Test func compactingThroughASymlinkReplacesTheRealFile() throws {
        let names = try Names()
        let engine = try StorageEngine(path: names.alias, configuration: fastConfiguration())
        var batch = WriteBatch()
        batch.put(type: "Hero", key: .integer(1), value: [1])
        try engine.commit(batch)
        batch.put(type: "Hero", key: .integer(1), value: [2])
        try engine.commit(batch)
        try engine.compact()
        try engine.close()
        let type = try FileManager.default.attributesOfItem(atPath: names.alias)[.type] as? FileAttributeType
        #expect(type == .typeSymbolicLink)
        let state = try openState(names.real, fastConfiguration())
        #expect(state.objects["Hero"]?[.integer(1)] == [2])
        let header = try LogHeader.decode(Array(try readFile(names.real)[0..<LogHeader.size]), path: names.real)
        #expect(header.compactedEnd > 0, "the real file is the compacted one")
    }

    @Test func aStoreFileWithAHardLinkIsRefused() throws {
        let names = try Names()
        try StorageEngine(path: names.real).close()
        let hard = names.directory.file("hard.store")
        #expect(link(names.real, hard) == 0)
        for path in [names.real, hard, names.alias] {
            #expect(throws: StorageError(.hardLinked(path: path, links: 2))) { try StorageEngine(path: path) }
            #expect(throws: StorageError(.hardLinked(path: path, links: 2))) {
                try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
            }
        }
        #expect(StorageError(.hardLinked(path: hard, links: 2)).description
            == "The store file '\(hard)' has 2 hard links. Its lock is found through the file's name, so another name of the same file would get a lock of its own and two writers could corrupt it; remove the other links (a symbolic link is fine).")
        // A refused open leaves nothing registered or locked behind.
        #expect(unlink(hard) == 0)
        try StorageEngine(path: names.alias).close()
    }
}
