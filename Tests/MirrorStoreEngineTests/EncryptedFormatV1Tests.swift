import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Encrypted files in format 1 (docs/FILE_FORMAT.md, "Encryption"): `Fixtures/encrypted-v1.store`
/// was written by the code before format 2, with `testEncryptionKey`, from `fixtureBatches()`.
/// They open and read as they were; a writable open rewrites them in format 2.
@Suite struct EncryptedFormatV1Tests {
    /// The commits the fixture holds: values of many lengths, so that its units fill a few data
    /// pages and end inside a partial one, some deletes, and metadata.
    static func fixtureBatches() -> [WriteBatch] {
        (0..<24).map { number in
            var batch = WriteBatch()
            batch.setSchema(type: "Fixture", schema: Array("fixture schema".utf8))
            let length = number * 211 % 700 + 1
            batch.put(type: "Fixture", key: .integer(Int64(number)), value: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) })
            if number % 5 == 4 { batch.delete(type: "Fixture", key: .integer(Int64(number - 3))) }
            batch.setMetadata(key: "written-by", value: Array("format 1, commit \(number)".utf8))
            return batch
        }
    }

    /// The state the fixture holds: the same commits applied to a plain store.
    static func expectedState() throws -> StoreState {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("plain.store"), configuration: fastConfiguration())
        for batch in fixtureBatches() { try engine.commit(batch) }
        defer { try? engine.close() }
        return try StoreState(engine.snapshot())
    }

    /// A copy of the fixture in `directory`.
    static func fixtureCopy(in directory: TemporaryDirectory) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/encrypted-v1.store")
        let path = directory.file("v1.store")
        try writeFile(path, Array(try Data(contentsOf: fixture)))
        return path
    }

    static func formatVersion(_ path: String) throws -> UInt32 {
        try EncryptedFileHeader.decode(Array(try readFile(path).prefix(EncryptedFileHeader.pageSize)), path: path).header.version
    }

    @Test func aFormat1FileReadsAsItWasWithoutBeingChanged() throws {
        let directory = TemporaryDirectory()
        let path = try Self.fixtureCopy(in: directory)
        let before = try readFile(path)
        #expect(try Self.formatVersion(path) == 1)
        let expected = try Self.expectedState()
        #expect(expected.sequence == 24)
        var configuration = encrypting(fastConfiguration())
        configuration.readOnly = true
        #expect(try openState(path, configuration) == expected)
        configuration.readOnly = false
        configuration.readsBesideWriter = true
        #expect(try openState(path, configuration) == expected)
        #expect(try verifyStoreFile(at: path, encryption: .key(testEncryptionKey)).isIntact)
        #expect(try readFile(path) == before, "reading changes nothing")
    }

    @Test func aWritableOpenRewritesAFormat1FileInFormat2() throws {
        let directory = TemporaryDirectory()
        let path = try Self.fixtureCopy(in: directory)
        var expected = try Self.expectedState()
        let engine = try StorageEngine(path: path, configuration: encrypting(fastConfiguration()))
        #expect(engine.statistics.lastAutoCompactionError == nil)
        #expect(try StoreState(engine.snapshot()) == expected)
        #expect(try Self.formatVersion(path) == 2)
        var batch = WriteBatch()
        batch.put(type: "Fixture", key: .integer(100), value: Array(repeating: 7, count: 5_000))
        try engine.commit(batch)
        expected = try StoreState(engine.snapshot())
        try engine.close()
        #expect(try openState(path, encrypting(fastConfiguration())) == expected)
        #expect(try Self.formatVersion(path) == 2)
        #expect(try verifyStoreFile(at: path, encryption: .key(testEncryptionKey)).isIntact)
    }
}
