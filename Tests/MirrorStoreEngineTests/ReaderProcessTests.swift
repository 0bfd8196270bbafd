import Foundation
import Testing
import TestSupport
@testable import EngineCrashChild
@testable import MirrorStoreEngine

/// One writer process committing pairs without pause, four reader processes refreshing beside it
/// (issue 28): the writer checkpoints and compacts as it goes and is killed with SIGKILL at
/// seeded random moments, then a new writer recovers the file and goes on. No reader may ever
/// see a torn pair or an older one, or stop working.
@Suite(.serialized) struct ReaderProcessTests {
    /// Run once more on an encrypted store (`encrypted`), whose readers find the key in the
    /// file's clear header and read pages the writer may be rewriting.
    @Test(arguments: [(UInt64(28), false), (29, true)])
    func fourReadersBesideAWriterKilledAgainAndAgain(seed: UInt64, encrypted: Bool) throws {
        let writerMode = encrypted ? "pairs-encrypted" : "pairs"
        let readerMode = encrypted ? "reader-encrypted" : "reader"
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("pairs.store")
        var generator = SeededRandom(seed: seed)
        var writer = try ChildProcess(executable: child, mode: writerMode, store: path)
        _ = try #require(writer.waitForLine(startingWith: "ack"))
        var readers: [ChildProcess] = []
        for _ in 0..<4 {
            let reader = try ChildProcess(executable: child, mode: readerMode, store: path)
            _ = try #require(reader.waitForLine(startingWith: "ready"))
            readers.append(reader)
        }
        var acknowledged = 0
        for round in 0..<5 {
            usleep(UInt32.random(in: 150_000...450_000, using: &generator))
            writer.kill()
            let acks = writer.lines().compactMap { line in line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil }
            #expect(!writer.lines().contains { $0.hasPrefix("error") }, "round \(round): \(writer.lines().filter { $0.hasPrefix("error") })")
            acknowledged = max(acknowledged, acks.last ?? 0)
            #expect(readers.allSatisfy { $0.process.isRunning }, "round \(round): a reader stopped with the writer")
            writer = try ChildProcess(executable: child, mode: writerMode, store: path)
            _ = try #require(writer.waitForLine(startingWith: "ready"), "round \(round): no new writer")
        }
        usleep(200_000)
        writer.kill()
        acknowledged = max(acknowledged, writer.lines().compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }.last ?? 0)
        for (number, reader) in readers.enumerated() {
            reader.finish()
            let lines = reader.lines()
            let problems = lines.filter { $0.hasPrefix("torn") || $0.hasPrefix("older") || $0.hasPrefix("error") }
            #expect(problems.isEmpty, "reader \(number): \(problems.prefix(5))")
            #expect(reader.process.terminationReason == .exit && reader.process.terminationStatus == 0, "reader \(number)")
            let done = try #require(lines.last { $0.hasPrefix("done ") }, "reader \(number): \(lines.suffix(3))")
            let figures = done.split(separator: " ").dropFirst().compactMap { Int($0) }
            try #require(figures.count == 3)
            let (refreshes, reopens, last) = (figures[0], figures[1], figures[2])
            #expect(refreshes > 50, "reader \(number): \(done)")
            #expect(reopens >= 1, "reader \(number) never moved to a compacted file: \(done)")
            #expect(last > 0 && last <= acknowledged + 1, "reader \(number) saw \(last), the writers acknowledged \(acknowledged)")
        }
        // The last state is every acknowledged pair, and one pair.
        var configuration = EngineConfiguration()
        if encrypted { configuration.encryption = .key(CrashWorkload.encryptionKeys[0]) }
        let final = try StorageEngine(path: path, configuration: configuration)
        let (a, b) = try PairWorkload.pair(final.snapshot())
        #expect(a == b && a >= acknowledged)
        try final.close()
    }
}
