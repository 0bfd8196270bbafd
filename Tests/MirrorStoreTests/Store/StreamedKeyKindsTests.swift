import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Models keyed by a UUID and by a String (canonically equal spellings among the names, which
/// are one key) through transactions that hold their records, that stream them, and that stream
/// them keeping at most 2 keys of a type in memory (`ByteKeyMap` in the transaction's and the
/// engine's tables, the rest in scratch runs): every read inside and after each transaction, and
/// after reopening, is the in-memory reference's.
@Suite("Streamed transactions with UUID and String keys")
struct StreamedKeyKindsTests {
    final class KeyedSession: Persistable {
        var id = UUID()
        var note = ""
        init() {}
        static var primaryKey: String? { "id" }
    }

    final class KeyedProfile: Persistable {
        var name = ""
        var score = 0
        init() {}
        static var primaryKey: String? { "name" }
    }

    static func store(_ directory: TemporaryDirectory, _ name: String, threshold: Int?, keysInMemory: Int? = nil) throws -> Store {
        var configuration = Store.Configuration()
        configuration.durability = .none
        if let threshold { configuration.transactionStreamingThreshold = threshold }
        configuration.streamKeysInMemory = keysInMemory
        return try Store(path: directory.file(name), models: [KeyedSession.self, KeyedProfile.self], configuration: configuration)
    }

    /// Every object of both types, in one canonical order.
    static func contents(_ store: Store) throws -> [String] {
        let sessions = try store.objects(KeyedSession.self).all().map { "\($0.id) \($0.note)" }
        let profiles = try store.objects(KeyedProfile.self).all().map { "\(String(decoding: $0.name._nfcCodeUnits, as: UTF8.self)) \($0.score)" }
        return sessions.sorted() + profiles.sorted()
    }

    static func expected(_ sessions: [UUID: String], _ profiles: [String: Int]) -> [String] {
        sessions.map { "\($0.key) \($0.value)" }.sorted()
            + profiles.map { "\(String(decoding: $0.key._nfcCodeUnits, as: UTF8.self)) \($0.value)" }.sorted()
    }

    @Test("reads inside and after every transaction, and reopened, are the reference's")
    func againstReference() throws {
        let seed = SeededRandom.seed(default: 0x5EED_0B7E)
        var random = SeededRandom(seed: seed)
        let uuids = (0..<60).map { _ in UUID(uuid: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }.withUnsafeBytes { $0.load(as: uuid_t.self) }) }
        let stems = ["ana", "\u{E9}mile", "e\u{301}mile", "zo\u{EB}", "user_name_longer_than_fifteen", "\u{1F600}"]
        let names = (0..<60).map { stems[$0 % stems.count] + String($0 / stems.count) }
        let directory = TemporaryDirectory()
        let stores = [
            try Self.store(directory, "held.store", threshold: nil),
            try Self.store(directory, "streamed.store", threshold: 1),
            try Self.store(directory, "spilled.store", threshold: 1, keysInMemory: 2),
        ]
        var sessions: [UUID: String] = [:]
        var profiles: [String: Int] = [:]
        for step in 0..<40 {
            let actions = (0..<Int.random(in: 1...60, using: &random)).map { _ in (Int.random(in: 0..<10, using: &random), Int.random(in: 0..<60, using: &random)) }
            var nextSessions = sessions
            var nextProfiles = profiles
            var insideExpected: [String] = []
            for action in actions {
                let (kind, pick) = action
                switch kind {
                case 0..<3: nextSessions[uuids[pick]] = "note \(step) \(pick)"
                case 3: nextSessions[uuids[pick]] = nil
                case 4..<7: nextProfiles[names[pick]] = step * 100 + pick
                case 7: nextProfiles[names[pick]] = nil
                case 8: insideExpected.append(nextSessions[uuids[pick]] ?? "none")
                default: insideExpected.append(nextProfiles[names[pick]].map(String.init) ?? "none")
                }
            }
            for (number, store) in stores.enumerated() {
                var inside: [String] = []
                try store.write { transaction in
                    for (kind, pick) in actions {
                        switch kind {
                        case 0..<3:
                            let session = KeyedSession()
                            session.id = uuids[pick]
                            session.note = "note \(step) \(pick)"
                            try transaction.add(session)
                        case 3: try transaction.delete(KeyedSession.self, primaryKey: uuids[pick])
                        case 4..<7:
                            let profile = KeyedProfile()
                            profile.name = names[pick]
                            profile.score = step * 100 + pick
                            try transaction.add(profile)
                        case 7: try transaction.delete(KeyedProfile.self, primaryKey: names[pick])
                        case 8: inside.append(try transaction.object(KeyedSession.self, primaryKey: uuids[pick])?.note ?? "none")
                        default: inside.append(try transaction.object(KeyedProfile.self, primaryKey: names[pick]).map { String($0.score) } ?? "none")
                        }
                    }
                }
                #expect(inside == insideExpected, "seed \(seed), step \(step), store \(number): inside")
                #expect(try Self.contents(store) == Self.expected(nextSessions, nextProfiles), "seed \(seed), step \(step), store \(number)")
            }
            sessions = nextSessions
            profiles = nextProfiles
        }
        for store in stores { try store.close() }
        for name in ["held.store", "streamed.store", "spilled.store"] {
            let reopened = try Self.store(directory, name, threshold: 1, keysInMemory: 2)
            #expect(try Self.contents(reopened) == Self.expected(sessions, profiles), "seed \(seed): \(name) reopened")
            for uuid in uuids { #expect(try reopened.object(KeyedSession.self, primaryKey: uuid)?.note == sessions[uuid]) }
            for name in names { #expect(try reopened.object(KeyedProfile.self, primaryKey: name)?.score == profiles[name]) }
            try reopened.close()
        }
    }
}
