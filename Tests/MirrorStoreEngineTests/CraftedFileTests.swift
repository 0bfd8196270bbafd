#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Files made to hurt the reader, as the crash-and-corruption probe made them: each ends in a
/// typed error (or a committed prefix with a report) within a second and in bounded memory,
/// never in a trap, a hang or a gigabyte of work.
@Suite struct CraftedFileTests {
    /// Seconds since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The peak resident memory of this process so far, in bytes.
    static func peakMemory() -> Int {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return usage.ru_maxrss
        #else
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
        #endif
    }

    /// A store of three commits, as bytes.
    static func threeCommits(in directory: TemporaryDirectory) throws -> RecordedStore {
        try RecordedStore.make(at: directory.file("source.store"), units: 3, seed: 0xC4AF7)
    }

    /// A valid unit (checksum and payload good) with the given sequence number.
    static func unit(sequence: UInt64) -> [UInt8] {
        var types = TypeTable()
        let (payload, _) = OperationCodec.encode([.setMetadata(key: "crafted", value: [1])], types: &types, fileOffset: 0, packing: .current)
        return LogFrame.encode(sequence: sequence, payload: payload)
    }

    // MARK: Sequence numbers no store writes (probe item 2)

    @Test func aUnitNumberedUInt64MaxIsDamageNotATrap() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("max.store")
        try writeFile(path, recorded.bytes + Self.unit(sequence: .max))
        let start = ContinuousClock.now
        let reason = "the unit's sequence number 18446744073709551615 is above 9223372036854775807, the highest a store writes"
        #expect(throws: StorageError(.corrupted(path: path, offset: UInt64(recorded.bytes.count), reason: reason))) {
            try StorageEngine(path: path, configuration: fastConfiguration())
        }
        let report = try verifyStoreFile(at: path)
        #expect(report.firstDamageOffset == UInt64(recorded.bytes.count) && report.damageReason == reason && !report.isTornTail)
        // Point-in-time recovery keeps the three commits, and the next commit is number 4.
        let engine = try StorageEngine(path: path, configuration: fastConfiguration(.recoverValidPrefix))
        #expect(engine.recoveryReport?.commitsDropped == 1)
        var batch = WriteBatch()
        batch.setMetadata(key: "after", value: [2])
        #expect(try engine.commit(batch) == 4)
        try engine.close()
        #expect(Self.seconds(since: start) < 1)
    }

    @Test func theHighestSequenceOpensButTakesNoMoreCommits() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("last.store")
        try writeFile(path, LogHeader(flags: 0).encoded() + Self.unit(sequence: LogFrame.maximumSequence))
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        #expect(engine.statistics.lastSequence == LogFrame.maximumSequence)
        var batch = WriteBatch()
        batch.setMetadata(key: "one more", value: [1])
        let exhausted = StorageError(.sequenceExhausted(path: path, last: LogFrame.maximumSequence))
        #expect(throws: exhausted) { try engine.commit(batch) }
        #expect(throws: exhausted) { try engine.rewrite(indexes: []) { _, _ in } }
        #expect(exhausted.description == "The store at '\(path)' has reached sequence number 9223372036854775807, the highest a commit can take, so it takes no more commits.")
        try engine.close()
        #expect(try readFile(path) == LogHeader(flags: 0).encoded() + Self.unit(sequence: LogFrame.maximumSequence))
    }

    /// A batch refused for want of a sequence number, in a group whose first batch is written,
    /// leaves nothing in the indexes the group publishes: its entries would name an object the
    /// store never held.
    @Test func aBatchRefusedLateInAGroupLeavesNoIndexEntries() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("almost.store")
        try writeFile(path, LogHeader(flags: 0).encoded() + Self.unit(sequence: LogFrame.maximumSequence - 1))
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        try engine.defineIndexes([SecondaryIndexTests.byValue])
        let written = engine.submit(GroupCommitTests.put("T", 1, 7))
        let refused = engine.submit(GroupCommitTests.put("T", 2, 7))
        #expect(try engine.wait(for: written) == LogFrame.maximumSequence)
        #expect(throws: StorageError(.sequenceExhausted(path: path, last: LogFrame.maximumSequence))) { try engine.wait(for: refused) }
        let snapshot = engine.snapshot()
        #expect(try snapshot.keys(type: "T") == [.integer(1)])
        #expect(try SecondaryIndexTests.entries(snapshot, "T.value") == SecondaryIndexTests.expectedEntries([1: 7]))
        try engine.close()
    }

    // MARK: Lengths the file does not hold (probe item 4)

    /// A unit header declaring `length` payload bytes after the three commits, the file then
    /// extended without writing to `size` bytes: a sparse file, whose hole reads as zeros.
    static func sparse(at path: String, after recorded: RecordedStore, length: UInt32, size: UInt64) throws {
        var header = ByteWriter()
        header.uint32(length)
        header.uint32(0xDEAD_BEEF)
        header.uint64(4)
        try writeFile(path, recorded.bytes + header.bytes)
        #expect(truncate(path, off_t(size)) == 0)
    }

    static func allocatedBytes(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return -1 }
        return Int(info.st_blocks) * 512
    }

    @Test func aGigabyteUnitOverAHoleAtTheEndIsATornTailKeptAsAHole() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("sparse.store")
        let end = UInt64(recorded.bytes.count + LogFrame.headerSize) + UInt64(LogFrame.maximumPayload)
        try Self.sparse(at: path, after: recorded, length: UInt32(LogFrame.maximumPayload), size: end)
        let memory = Self.peakMemory()
        let start = ContinuousClock.now
        let verified = try verifyStoreFile(at: path)
        #expect(verified.isTornTail && verified.firstDamageOffset == UInt64(recorded.bytes.count))
        let (state, report) = try openStateAndReport(path, fastConfiguration())
        #expect(Self.seconds(since: start) < 1)
        #expect(Self.peakMemory() - memory < 256 << 20, "no gigabyte read into memory")
        #expect(state == recorded.states[3])
        let sidecar = try #require(report?.keptAt)
        #expect(report?.droppedBytes == end - UInt64(recorded.bytes.count))
        // The sidecar keeps the header that was written and the hole as a hole.
        #expect(Self.allocatedBytes(sidecar) < 1 << 20)
        let kept = try #require(FileHandle(forReadingAtPath: sidecar))
        defer { try? kept.close() }
        let head = Array(kept.readData(ofLength: 4_096))
        let sidecarSize = try FileSystem.fileSize(kept.fileDescriptor, path: sidecar)
        let decoded = try #require(DroppedBytesFile.decode(head, path: sidecar, fileSize: sidecarSize))
        #expect(decoded.droppedBytes == report?.droppedBytes)
        let keptStart = Int(sidecarSize - decoded.droppedBytes)
        #expect(Array(head[keptStart..<(keptStart + 4)]) == [0, 0, 0, 0x40], "the declared length, kept")
        #expect(try readFile(path) == recorded.bytes)
    }

    @Test func aGigabyteUnitInAFourGigabyteSparseFileIsRefusedCheaply() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("sparse4.store")
        let size: UInt64 = 4 << 30
        try Self.sparse(at: path, after: recorded, length: UInt32(LogFrame.maximumPayload), size: size)
        let memory = Self.peakMemory()
        let start = ContinuousClock.now
        let offset = UInt64(recorded.bytes.count)
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path, configuration: fastConfiguration()) }
        #expect(error == StorageError(.corrupted(
            path: path, offset: offset,
            reason: "the unit's checksum does not match its contents, and \(size - offset - UInt64(LogFrame.headerSize) - UInt64(LogFrame.maximumPayload)) more bytes follow the end it declares, so it is not an interrupted last append")))
        #expect(try verifyStoreFile(at: path).firstDamageOffset == offset)
        let (state, report) = try openStateAndReport(path, fastConfiguration(.recoverValidPrefix))
        #expect(Self.seconds(since: start) < 1)
        #expect(Self.peakMemory() - memory < 256 << 20, "no gigabyte read into memory")
        #expect(state == recorded.states[3])
        #expect(report?.droppedBytes == size - offset)
        #expect(Self.allocatedBytes(try #require(report?.keptAt)) < 1 << 20, "the sidecar holds no bytes that were never written")
    }

    @Test func aLengthPastTheEndOfTheFileIsRefusedBeforeAnythingIsRead() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("short.store")
        try Self.sparse(at: path, after: recorded, length: UInt32(LogFrame.maximumPayload), size: UInt64(recorded.bytes.count + 4_096))
        let report = try verifyStoreFile(at: path)
        #expect(report.isTornTail)
        #expect(report.damageReason == "the unit's declared length of 1073741824 bytes runs past the end of the file")
    }

    /// Behind a bad unit, a header every 16 bytes that passes the cheap tests and declares a
    /// window's worth: each would be hashed to its end, hundreds of gigabytes in all for 4 MiB.
    @Test func aFileDenseWithPlausibleHeadersStopsTheSearchForLaterUnits() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("dense.store")
        let tail = 4 << 20
        var bytes = ByteWriter()
        bytes.uint32(UInt32(tail - LogFrame.headerSize))
        bytes.uint32(0xDEAD_BEEF)
        bytes.uint64(4)
        while bytes.bytes.count < tail {
            bytes.uint32(UInt32(Recovery.windowSize - 2 * LogFrame.headerSize))
            bytes.uint32(0xBAD_C0DE)
            bytes.uint64(4)
        }
        try writeFile(path, recorded.bytes + bytes.bytes)
        let report = try verifyStoreFile(at: path)
        #expect(!report.isTornTail && report.firstDamageOffset == UInt64(recorded.bytes.count))
        let reason = try #require(report.damageReason)
        #expect(reason.contains("and the search for a valid unit after it checked"), "\(report)")
        // The work is bounded by the bytes hashed, not by a clock: the search's budget (four times
        // the rest of the file and 64 MiB) plus the one unit that crossed it.
        let checked = try #require(reason.split(separator: " ").drop { $0 != "checked" }.dropFirst().first.flatMap { Int($0) })
        #expect(checked <= 4 * tail + (64 << 20) + Recovery.windowSize)
        #expect(throws: StorageError.self) { try StorageEngine(path: path, configuration: fastConfiguration()) }
        #expect(try openState(path, fastConfiguration(.recoverValidPrefix)) == recorded.states[3])
    }

    /// A search for valid units after a bad one skips holes: a zero header is never a valid unit.
    @Test func sixteenZeroBytesAreNeverAValidUnit() {
        let zeros = [UInt8](repeating: 0, count: LogFrame.headerSize)
        #expect(LogFrame.checksum(zeros, frameStart: 0, payloadLength: 0) != CRC32C.unmask(0))
    }

    // MARK: Files that are not regular files (probe item 5)

    /// Runs `body` while a watchdog unblocks, from three seconds on, every open that blocked on
    /// the FIFO at `path` (by opening its other end), so that a regression fails instead of hanging.
    static func withWatchdog(on path: String, _ body: () throws -> Void) throws {
        let done = Lock(false)
        let watchdog = Thread {
            for _ in 0..<300 where !done.withLock({ $0 }) { usleep(10_000) }
            while !done.withLock({ $0 }) {
                let descriptor = open(path, O_RDWR | O_NONBLOCK)
                usleep(100_000)
                if descriptor >= 0 { close(descriptor) }
            }
        }
        watchdog.start()
        defer { done.withLock { $0 = true } }
        try body()
    }

    @Test func aFIFOIsRefusedAtOnceInEveryMode() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("pipe.store")
        #expect(mkfifo(path, 0o644) == 0)
        let refused = StorageError(.notARegularFile(path: path, fileType: "a FIFO"))
        #expect(refused.description == "The path '\(path)' names a FIFO, not a regular file, so it is not a store.")
        try Self.withWatchdog(on: path) {
            let start = ContinuousClock.now
            #expect(throws: refused) { try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true)) }
            #expect(throws: refused) { try StorageEngine(path: path) }
            #expect(throws: refused) { try verifyStoreFile(at: path) }
            #expect(Self.seconds(since: start) < 1)
        }
        // A directory is refused the same way.
        let folder = directory.file("folder.store")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(throws: StorageError(.notARegularFile(path: folder, fileType: "a directory"))) { try verifyStoreFile(at: folder) }
        #expect(throws: StorageError(.notARegularFile(path: folder, fileType: "a directory"))) {
            try StorageEngine(path: folder, configuration: EngineConfiguration(readOnly: true))
        }
    }

    @Test func aFIFOBesideTheStoreIsNeitherOpenedNorWaitedFor() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.threeCommits(in: directory)
        let path = directory.file("beside.store")
        try writeFile(path, recorded.bytes)
        let sidecar = path + ".dropped-1"
        #expect(mkfifo(sidecar, 0o644) == 0)
        try Self.withWatchdog(on: sidecar) { () throws -> Void in
            let report = try verifyStoreFile(at: path)
            #expect(report.keptRecoveries.isEmpty)
        }
        let lock = path + ".lock"
        #expect(mkfifo(lock, 0o644) == 0)
        try Self.withWatchdog(on: lock) {
            #expect(throws: StorageError(.notARegularFile(path: lock, fileType: "a FIFO"))) {
                try StorageEngine(path: path, configuration: EngineConfiguration(readOnly: true))
            }
        }
    }
}
