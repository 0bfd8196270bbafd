import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Encrypted files in format 1 (docs/FILE_FORMAT.md, "Encryption"): `Fixtures/encrypted-v1.store`
/// was written by the code before format 2, with `testEncryptionKey`, from `fixtureBatches()`.
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

    @Test func writeTheFixture() throws {
        guard let output = ProcessInfo.processInfo.environment["MIRRORSTORE_WRITE_ENCRYPTED_V1_FIXTURE"] else { return }
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 1 << 30
        let engine = try StorageEngine(path: output, configuration: configuration)
        for batch in Self.fixtureBatches() { try engine.commit(batch) }
        try engine.close()
    }
}
