import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Bad files and bad places end in typed errors whose descriptions say what happened.
@Suite struct ErrorTests {
    @Test func aFileThatIsNotAStore() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("notes.txt")
        try writeFile(path, Array("Dear diary, today I opened a text file as a database.".utf8))
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path) }
        #expect(error.description == "The file at '\(path)' is not a MirrorStore store: it does not start with the MirrorStore header.")
        #expect(throws: StorageError(.notAStore(path: path))) { try verifyStoreFile(at: path) }
        #expect(try readFile(path) == Array("Dear diary, today I opened a text file as a database.".utf8), "left untouched")
    }

    @Test func aNewerFormat() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("future.store")
        try writeFile(path, LogHeader(version: 8).encoded())
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path) }
        #expect(error.description == "The store at '\(path)' uses format version 8, but this MirrorStore reads only versions up to \(LogHeader.currentVersion).")
        #expect(error == StorageError(.newerFormat(path: path, found: 8, supported: LogHeader.currentVersion)))
    }

    @Test func aDamagedHeader() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("header.store")
        var header = LogHeader().encoded()
        header[9] ^= 0x04
        try writeFile(path, header)
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path) }
        #expect(error.description == "The store at '\(path)' is corrupted at byte offset 0: the header checksum does not match.")
    }

    @Test func anUnwritableDirectory() throws {
        let path: String
        let directory = TemporaryDirectory()
        #if os(Linux)
        // Root ignores permission bits, but not sysfs, which refuses new files even to root.
        let isRoot = getuid() == 0
        #else
        let isRoot = false
        #endif
        if isRoot {
            path = "/sys/mirrorstore-test.store"
        } else {
            let locked = directory.file("locked")
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o555])
            path = locked + "/x.store"
        }
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path) }
        // Named by the store, as the app gave it, not by its lock file.
        #expect(error.description == "Could not create the lock file of the store '\(path)': Permission denied (errno 13); check the permissions of the file and of its folder.")
        if !isRoot { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.file("locked")) }
    }

    @Test func aMissingDirectory() throws {
        let path = "/nonexistent-mirrorstore-dir/x.store"
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path) }
        #expect(error.description == "Could not create the lock file of the store '\(path)': No such file or directory (errno 2); check the path: the file or its folder does not exist.")
    }

    @Test func readOnlyOnAMissingFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("missing.store")
        let error = try #require(throws: StorageError.self) {
            try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
        }
        #expect(error.description == "Could not open the store file '\(path)': No such file or directory (errno 2); check the path: the file or its folder does not exist.")
    }

    @Test func closedEngine() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration())
        var batch = WriteBatch()
        batch.put(type: "T", key: .integer(1), value: [1])
        try engine.commit(batch)
        try engine.close()
        try engine.close()
        let error = try #require(throws: StorageError.self) { try engine.compact() }
        #expect(error.description == "The storage engine is closed.")
        #expect(throws: StorageError(.closed)) { try engine.snapshot().value(type: "T", key: .integer(1)) }
    }
}
