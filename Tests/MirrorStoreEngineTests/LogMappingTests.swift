import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

@Suite("Log mapping")
struct LogMappingTests {
    private func withFile(_ bytes: [UInt8], _ body: (Int32) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "log-mapping-" + UUID().uuidString
        try #require(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let descriptor = open(path, O_RDWR)
        defer {
            close(descriptor)
            unlink(path)
        }
        try #require(descriptor >= 0)
        try body(descriptor)
    }

    @Test("reads go through the mapping only below the known end of the file")
    func knownEnd() throws {
        let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try withFile(bytes) { descriptor in
            let mapping = LogMapping(descriptor: descriptor, fileSize: 4096)
            #expect(mapping.read(at: 100, count: 50) == Array(bytes[100..<150]))
            #expect(mapping.read(at: 4000, count: 96) == Array(bytes[4000..<4096]))
            #expect(mapping.read(at: 4000, count: 97) == nil, "past the end: left to pread, never touched")
            #expect(mapping.read(at: .max, count: 2) == nil)

            // The file grows: appended bytes become readable once reported.
            let more = [UInt8](repeating: 0xAB, count: 3 << 20)
            #expect(pwrite(descriptor, more, more.count, 4096) == more.count)
            #expect(mapping.read(at: 4096, count: 10) == nil)
            mapping.extend(to: 4096 + UInt64(more.count))
            #expect(mapping.read(at: 4096 + 1_000_000, count: 10) == Array(repeating: 0xAB, count: 10))
            #expect(mapping.read(at: 100, count: 50) == Array(bytes[100..<150]))

            // The file is cut: nothing past the new end is read through a mapping.
            mapping.truncate(to: 1000)
            #expect(ftruncate(descriptor, 1000) == 0)
            #expect(mapping.read(at: 900, count: 200) == nil)
            #expect(mapping.read(at: 900, count: 100) == Array(bytes[900..<1000]))
        }
    }

    /// The byte at `offset` of `readsWhileGrowing()`'s file.
    @Sendable
    private static func byte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 7 &+ offset >> 9) }

    @Test("readers on other threads read the bytes written while the file grows and its mapping is replaced")
    func readsWhileGrowing() throws {
        let chunk = 256 << 10
        try withFile((0..<chunk).map(Self.byte(at:))) { descriptor in
            let mapping = LogMapping(descriptor: descriptor, fileSize: UInt64(chunk))
            let known = Lock(chunk)
            let wrong = Lock(0)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                if worker == 0 {
                    // Past the first mapping's 1 MiB and through several larger ones.
                    for step in 1..<24 {
                        let start = step * chunk
                        let bytes = (start..<(start + chunk)).map(Self.byte(at:))
                        guard pwrite(descriptor, bytes, chunk, off_t(start)) == chunk else { return wrong.withLock { $0 += 1 } }
                        mapping.extend(to: UInt64(start + chunk))
                        known.withLock { $0 = start + chunk }
                    }
                    return
                }
                var random = SeededRandom(seed: UInt64(worker))
                for _ in 0..<3000 {
                    let end = known.withLock { $0 }
                    let count = Int.random(in: 1...700, using: &random)
                    let offset = Int.random(in: 0...(end - count), using: &random)
                    let expected = (offset..<(offset + count)).map(Self.byte(at:))
                    if mapping.read(at: UInt64(offset), count: count) != expected { wrong.withLock { $0 += 1 } }
                }
            }
            #expect(wrong.withLock { $0 } == 0)
        }
    }

    @Test("an engine reads the same values through its mapping before and after growth and compaction")
    func engineReads() throws {
        let path = NSTemporaryDirectory() + "log-mapping-engine-" + UUID().uuidString
        defer {
            for suffix in ["", ".lock"] { unlink(path + suffix) }
        }
        var configuration = EngineConfiguration()
        configuration.durability = .none
        configuration.autoCompaction = .disabled
        let engine = try StorageEngine(path: path, configuration: configuration)
        let early = engine.snapshot()
        for round in 0..<200 {
            var batch = WriteBatch()
            for key in 0..<50 {
                batch.put(type: "T", key: .integer(Int64(key)), value: Array(repeating: UInt8(truncatingIfNeeded: round), count: 400))
            }
            try engine.commit(batch)
            let snapshot = engine.snapshot()
            #expect(try snapshot.value(type: "T", key: .integer(Int64(round % 50))) == Array(repeating: UInt8(truncatingIfNeeded: round), count: 400))
        }
        let beforeCompaction = engine.snapshot()
        try engine.compact()
        #expect(try beforeCompaction.value(type: "T", key: .integer(3)) == Array(repeating: 199, count: 400))
        #expect(try engine.snapshot().value(type: "T", key: .integer(3)) == Array(repeating: 199, count: 400))
        #expect(try early.value(type: "T", key: .integer(3)) == nil)
        try engine.close()
    }
}
