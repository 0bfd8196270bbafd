import Foundation
import Testing
import MirrorStore
import TestSupport
@testable import MigrationCrashChild

/// kill -9 a child migrating 100,000 contacts at seeded random moments: every reopen must find
/// the complete version-1 store or the complete version-2 one, never a mix, and an interrupted
/// migration must run again to completion. Version 2 deletes a tenth of the contacts, and their
/// notes by a delete rule once every object is written: the notes' count tells those deletes
/// were not lost or half done.
@Suite(.serialized) struct MigrationCrashTests {
    static let contacts = 100_000

    enum Found: Equatable {
        case old, new
    }

    /// Which complete state the file at `path` holds, found by reopening it as each version of
    /// the app would without migrating: every contact when `sample` is nil, else that many
    /// seeded-random ones, plus the count. Records an issue for anything else.
    static func state(at path: String, sample: Int?, context: String) throws -> Found? {
        var generator = SeededRandom(seed: 0x5EED_0902)
        let keys = sample.map { count in (0..<count).map { _ in Int.random(in: 1...contacts, using: &generator) } }
            ?? Array(1...contacts)
        let inspector = try StoreInspector(path: path)
        let version = inspector.schemaVersion
        let counts = [inspector.count(of: "Contact"), inspector.count(of: "Note")]
        try inspector.close()
        switch version {
        case 1:
            #expect(counts == [contacts, contacts / 5], "\(context): \(counts) contacts and notes in version 1")
            let store = try Store(
                path: path, models: [MigrationWorkload.ContactV1.self, MigrationWorkload.Note.self], configuration: MigrationWorkload.configuration(version: 1))
            defer { try? store.close() }
            let differing = try keys.filter { n in
                try store.object(MigrationWorkload.ContactV1.self, primaryKey: n)?.name != MigrationWorkload.contact(n).name
            }
            #expect(differing.isEmpty, "\(context): \(differing.count) contacts differ from version 1")
            return .old
        case 2:
            #expect(counts == [contacts - contacts / 10, contacts / 10], "\(context): \(counts) contacts and notes in version 2")
            let store = try Store(
                path: path, models: [MigrationWorkload.ContactV2.self, MigrationWorkload.Note.self], configuration: MigrationWorkload.configuration(version: 2))
            defer { try? store.close() }
            let differing = try keys.filter { n in
                try store.object(MigrationWorkload.ContactV2.self, primaryKey: n) != MigrationWorkload.migrated(n)
            }
            #expect(differing.isEmpty, "\(context): \(differing.count) contacts differ from version 2")
            return .new
        default:
            Issue.record("\(context): schema version \(String(describing: version))")
            return nil
        }
    }

    @Test func killedMigrationLeavesOldOrNewState() throws {
        let child = try #require(childExecutableURL(named: "MigrationCrashChild"), "MigrationCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let pristine = directory.file("pristine.store")
        try MigrationWorkload.populate(pristine, count: Self.contacts)
        let path = directory.file("crash.store")
        func freshCopy() throws {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: pristine, toPath: path)
        }

        // One migration left to finish, to learn how long one takes.
        try freshCopy()
        let started = Date()
        let full = try ChildProcess(executable: child, mode: "migrate", store: path)
        _ = full.waitForLine(startingWith: "ready")
        #expect(full.waitForLine(startingWith: "migrated") != nil, "the migration should complete: \(full.lines())")
        full.finish()
        let duration = Date().timeIntervalSince(started)
        #expect(try Self.state(at: path, sample: nil, context: "uninterrupted") == .new)

        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5EED_0901))
        var found: [Found] = []
        func killedRound(after delay: Double, context: String) throws {
            try freshCopy()
            let process = try ChildProcess(executable: child, mode: "migrate", store: path)
            _ = process.waitForLine(startingWith: "ready")
            usleep(UInt32(delay * 1_000_000))
            process.kill()
            #expect(!process.lines().contains { $0.hasPrefix("error") }, "\(context): \(process.lines())")
            if let state = try Self.state(at: path, sample: 2_000, context: context) { found.append(state) }
        }
        for round in 0..<20 {
            // Anywhere in the migration, and past its usual end: how long one takes varies.
            try killedRound(after: Double.random(in: 0...(duration * 1.4), using: &generator), context: "round \(round)")
        }
        // Both outcomes happen. On a loaded machine a migration may take longer than the one
        // measured, so that no random kill came after its end: a kill well past it, and one at
        // once, make sure each outcome is seen and checked.
        if !found.contains(.new) { try killedRound(after: duration * 4, context: "late round") }
        if !found.contains(.old) { try killedRound(after: 0, context: "early round") }
        #expect(found.contains(.old) && found.contains(.new), "\(found)")

        // An interrupted migration runs again on the next open, to the complete new state.
        try freshCopy()
        let interrupted = try ChildProcess(executable: child, mode: "migrate", store: path)
        _ = interrupted.waitForLine(startingWith: "ready")
        usleep(UInt32(duration * 500_000))
        interrupted.kill()
        try Store(path: path, models: [MigrationWorkload.ContactV2.self, MigrationWorkload.Note.self], configuration: MigrationWorkload.configuration(version: 2)).close()
        #expect(!FileManager.default.fileExists(atPath: path + ".compact-tmp"))
        #expect(try Self.state(at: path, sample: nil, context: "after the interrupted migration ran again") == .new)
    }
}
