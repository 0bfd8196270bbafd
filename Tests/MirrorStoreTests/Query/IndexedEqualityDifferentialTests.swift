import Foundation
import Testing
import TestSupport
import MirrorStore

/// Unique and non-unique indexes on a string, an integer and a date, some values shared: the
/// equalities a unique index answers by stopping at the first object it finds, beside those that
/// walk a key's entries to their end.
private final class Badge: Persistable {
    var identifier = 0
    var code = ""
    var serial = 0
    var issued = Date(timeIntervalSinceReferenceDate: 0)
    var holder = ""
    var grade = 0
    var expires = Date(timeIntervalSinceReferenceDate: 0)
    init() {}
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["code", "serial", "issued"] }
    static var indexedProperties: [String] { ["holder", "grade", "expires"] }

    var summary: String {
        "\(identifier) \(code) \(serial) \(issued.timeIntervalSinceReferenceDate) \(holder) \(grade) \(expires.timeIntervalSinceReferenceDate)"
    }
}

/// Equalities on unique and non-unique indexes against plain Swift on the same models: from the
/// in-memory part, from persisted runs and from both; and on damaged copies of a store with runs,
/// where each query gives the reference's answer or throws, never another answer.
@Suite("Indexed equalities against a plain Swift reference")
struct IndexedEqualityDifferentialTests {
    static let seed = SeededRandom.seed(default: 0x5EED_0E04)

    private static func randomBadge(_ identifier: Int, _ random: inout SeededRandom) -> Badge {
        let badge = Badge()
        badge.identifier = identifier
        // Unique values: derived from the identifier, spelled so that they do not sort as it does.
        badge.code = random.chance(50) ? "c-\(identifier * 7919 % 1000)-\(identifier)" : "a longer code, café \(identifier)"
        badge.serial = (identifier * 104_729) % 1_000_003 - 500_000
        badge.issued = Date(timeIntervalSinceReferenceDate: Double(identifier) * 86_400 + 0.5)
        // Shared values: a few of each, so that keys have several objects.
        badge.holder = "holder \(Int.random(in: 0..<6, using: &random))"
        badge.grade = Int.random(in: -2...2, using: &random)
        badge.expires = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<5, using: &random)) * 3_600)
        return badge
    }

    @Test("unique and shared keys give what plain Swift gives, from runs and the in-memory part")
    func equalitiesMatchTheReference() throws {
        var random = SeededRandom(seed: Self.seed)
        var configuration = Store.Configuration()
        configuration.durability = .none
        try withTemporaryDirectory { directory in
            let path = directory + "/badges.store"
            var reference: [Int: Badge] = [:]
            var store = try Store(path: path, models: [Badge.self], configuration: configuration)
            var next = 0
            for phase in 0..<5 {
                try store.write { transaction in
                    for _ in 0..<Int.random(in: 60...200, using: &random) {
                        var identifier = random.chance(20) && next > 0 ? Int.random(in: 0..<next, using: &random) : next
                        // A deleted object's unique values may live on in an heir: only stored objects come back.
                        if reference[identifier] == nil { identifier = next }
                        if identifier == next { next += 1 }
                        let badge = Self.randomBadge(identifier, &random)
                        try transaction.add(badge)
                        reference[identifier] = badge
                    }
                    for _ in 0..<Int.random(in: 0...15, using: &random) where next > 0 {
                        let identifier = Int.random(in: 0..<next, using: &random)
                        let gone = reference[identifier]
                        try transaction.delete(Badge.self, primaryKey: identifier)
                        reference[identifier] = nil
                        // A unique value a run may still list under the deleted object, now another's:
                        // the walk that stops at the first object must find the new holder.
                        if let gone, random.chance(50) {
                            let heir = Self.randomBadge(next, &random)
                            (heir.code, heir.serial, heir.issued) = (gone.code, gone.serial, gone.issued)
                            try transaction.add(heir)
                            reference[next] = heir
                            next += 1
                        }
                    }
                }
                // Runs written by a compaction and reopened from them; the next phase's changes on top.
                if phase % 2 == 1 {
                    try store.compact()
                    try store.close()
                    store = try Store(path: path, models: [Badge.self], configuration: configuration)
                }
                try Self.check(store, reference: reference, next: next, random: &random) { "seed \(Self.seed), phase \(phase), \($0)" }
            }
            try store.close()
        }
    }

    @Test("damaged copies of a store with runs answer as the reference or throw")
    func damagedStoresNeverAnswerOtherwise() throws {
        var random = SeededRandom(seed: Self.seed ^ 0xDA)
        var configuration = Store.Configuration()
        configuration.durability = .none
        try withTemporaryDirectory { directory in
            let path = directory + "/badges.store"
            var reference: [Int: Badge] = [:]
            let store = try Store(path: path, models: [Badge.self], configuration: configuration)
            try store.write { transaction in
                for identifier in 0..<400 {
                    let badge = Self.randomBadge(identifier, &random)
                    try transaction.add(badge)
                    reference[identifier] = badge
                }
            }
            try store.compact()
            try store.close()
            let intact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let damagedPath = directory + "/damaged.store"
            var answered = 0
            for round in 0..<40 {
                // One bit flipped, in the second half of the file most often, where the runs lie.
                var bytes = intact
                let start = random.chance(75) ? bytes.count / 2 : 0
                bytes[Int.random(in: start..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                try? FileManager.default.removeItem(atPath: damagedPath)
                try? FileManager.default.removeItem(atPath: damagedPath + ".lock")
                try Data(bytes).write(to: URL(fileURLWithPath: damagedPath))
                guard let damaged = try? Store(path: damagedPath, models: [Badge.self], configuration: configuration) else { continue }
                answered += try Self.check(damaged, reference: reference, next: 400, random: &random, throwsAllowed: true) {
                    "seed \(Self.seed), damage round \(round), \($0)"
                }
                try? damaged.close()
            }
            #expect(answered > 0, "seed \(Self.seed): no damaged copy answered a query")
        }
    }

    /// Checks equalities on every indexed property against `reference`, for present and absent
    /// values; with `throwsAllowed`, a query may throw instead. Returns how many answered.
    @discardableResult
    private static func check(
        _ store: Store, reference: [Int: Badge], next: Int, random: inout SeededRandom, throwsAllowed: Bool = false,
        _ context: (String) -> String
    ) throws -> Int {
        let byKey = reference.values.sorted { $0.identifier < $1.identifier }
        var answered = 0
        func compare(_ name: String, _ results: () throws -> [Badge], _ expected: [Badge]) throws {
            let found: [Badge]
            do {
                found = try results()
            } catch {
                if throwsAllowed { return }
                throw error
            }
            answered += 1
            #expect(found.map(\.summary) == expected.map(\.summary), "\(context(name))")
        }
        for _ in 0..<12 {
            // A stored object's values, or a deleted (or never stored) one's.
            let sample = byKey.isEmpty || random.chance(25)
                ? Self.randomBadge(Int.random(in: 0..<(next + 10), using: &random), &random)
                : byKey[Int.random(in: 0..<byKey.count, using: &random)]
            let (code, serial, issued) = (sample.code, sample.serial, sample.issued)
            let (holder, grade, expires) = (sample.holder, sample.grade, sample.expires)
            try compare("code \(code)", { try store.objects(Badge.self).filter(#Predicate { $0.code == code }).all() },
                        byKey.filter { $0.code == code })
            try compare("serial \(serial)", { try store.objects(Badge.self).filter(#Predicate { $0.serial == serial }).all() },
                        byKey.filter { $0.serial == serial })
            try compare("issued \(issued)", { try store.objects(Badge.self).filter(#Predicate { $0.issued == issued }).all() },
                        byKey.filter { $0.issued == issued })
            try compare("holder \(holder)", { try store.objects(Badge.self).filter(#Predicate { $0.holder == holder }).all() },
                        byKey.filter { $0.holder == holder })
            try compare("grade \(grade)", { try store.objects(Badge.self).filter(#Predicate { $0.grade == grade }).all() },
                        byKey.filter { $0.grade == grade })
            try compare("expires \(expires)", { try store.objects(Badge.self).filter(#Predicate { $0.expires == expires }).all() },
                        byKey.filter { $0.expires == expires })
            // Two matches at most from two unique keys, counted and read by position as well.
            let other = byKey.randomElement(using: &random)?.serial ?? serial
            try compare("serial \(serial) or \(other)", {
                let results = try store.objects(Badge.self).filter(#Predicate { $0.serial == serial || $0.serial == other })
                return try (0..<results.count).map { try results.object(at: $0) }
            }, byKey.filter { $0.serial == serial || $0.serial == other })
            try compare("code \(code), counted", {
                let results = try store.objects(Badge.self).filter(#Predicate { $0.code == code })
                return try (0..<results.count).map { try results.object(at: $0) }
            }, byKey.filter { $0.code == code })
        }
        return answered
    }
}
