import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// A member with a unique email and two ordered indexes, for streamed transactions whose index
/// entries go to scratch runs.
struct SpillMember: Persistable, Equatable {
    var identifier = 0
    var email = ""
    var city = ""
    var age = 0
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["city", "age"] }
    static var uniqueProperties: [String] { ["email"] }
}

/// Streamed transactions on a store that keeps at most 3 keys and 3 entries of an index in
/// memory (`StreamIndexSpill`: the rest in scratch files' runs until a checkpoint merges them):
/// seeded random adds, replacements, email changes, deletes and clearings, some breaking the
/// unique email inside the transaction or against committed members, each checked against a
/// plain dictionary: a refused transaction throws `uniqueViolation` and leaves nothing, and
/// every query by index answers as the dictionary does, across checkpoints and reopenings.
@Suite("Streamed transactions spill index entries")
struct StreamedIndexSpillTests {
    static let cities = ["Lyon", "Nantes", "Paris", "Rennes"]

    static func store(_ path: String, spilled: Bool, checkpointInterval: Int, encrypted: Bool = false) throws -> Store {
        var configuration = Store.Configuration()
        // Its scratch files are then sealed under keys of their own.
        if encrypted { configuration.encryption = .key(Data(repeating: 7, count: 32)) }
        configuration.durability = .none
        configuration.transactionStreamingThreshold = 1
        if spilled { configuration.streamKeysInMemory = 3 }
        configuration.checkpointInterval = checkpointInterval
        return try Store(path: path, models: [SpillMember.self], configuration: configuration)
    }

    /// What the store answers by each index, beside its members.
    static func answers(_ store: Store) throws -> [String] {
        let members = try store.objects(SpillMember.self)
        var lines = try members.sorted(using: [SortDescriptor(\.age), SortDescriptor(\.identifier)]).all()
            .map { "\($0.identifier) \($0.email) \($0.city) \($0.age)" }
        for city in cities {
            let found = try members.filter(#Predicate { $0.city == city }).all().map(\.identifier).sorted()
            lines.append("\(city): \(found)")
            lines.append("count \(city): \(try members.filter(#Predicate { $0.city == city }).count)")
        }
        for age in [0, 7, 15] {
            let found = try members.filter(#Predicate { $0.age >= age && $0.age < age + 6 }).sorted(using: SortDescriptor(\.age)).all()
            lines.append("ages from \(age): \(found.map { "\($0.age)/\($0.identifier)" })")
        }
        for number in [0, 5, 33, 77] {
            let email = "m\(number)@x"
            lines.append("\(email): \(try members.filter(#Predicate { $0.email == email }).all().map(\.identifier))")
        }
        lines.append("first 5 by city: \(try members.sorted(using: [SortDescriptor(\.city), SortDescriptor(\.identifier)]).prefix(5).map(\.identifier))")
        return lines
    }

    /// The same answers from a dictionary.
    static func expected(_ reference: [Int: SpillMember]) -> [String] {
        let members = reference.values.sorted { ($0.age, $0.identifier) < ($1.age, $1.identifier) }
        var lines = members.map { "\($0.identifier) \($0.email) \($0.city) \($0.age)" }
        for city in cities {
            let found = members.filter { $0.city == city }.map(\.identifier).sorted()
            lines.append("\(city): \(found)")
            lines.append("count \(city): \(found.count)")
        }
        for age in [0, 7, 15] {
            let found = members.filter { $0.age >= age && $0.age < age + 6 }
            lines.append("ages from \(age): \(found.map { "\($0.age)/\($0.identifier)" })")
        }
        for number in [0, 5, 33, 77] {
            lines.append("m\(number)@x: \(members.filter { $0.email == "m\(number)@x" }.map(\.identifier))")
        }
        let byCity = members.sorted { ($0.city, $0.identifier) < ($1.city, $1.identifier) }
        lines.append("first 5 by city: \(byCity.prefix(5).map(\.identifier))")
        return lines
    }

    static func hasDuplicateEmail(_ members: [Int: SpillMember]) -> Bool {
        var seen = Set<String>()
        return members.values.contains { !seen.insert($0.email).inserted }
    }

    @Test("random streamed transactions with spilled index entries agree with a dictionary", arguments: [0, 1, 2])
    func agreeWithADictionary(round: UInt64) throws {
        try checkAgainstADictionary(seed: SeededRandom.seed(default: 0x5B11_1D00 + round), encrypted: false)
    }

    @Test("the same on an encrypted store, its scratch files sealed", arguments: [0])
    func encryptedAgreeWithADictionary(round: UInt64) throws {
        try checkAgainstADictionary(seed: SeededRandom.seed(default: 0x5B11_1DE0 + round), encrypted: true)
    }

    func checkAgainstADictionary(seed: UInt64, encrypted: Bool) throws {
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        let path = directory.file("members.store")
        var store = try Self.store(path, spilled: true, checkpointInterval: 1 << 30, encrypted: encrypted)
        var reference: [Int: SpillMember] = [:]
        var refusals = 0
        var commits = 0
        // Emails are taken from a pool a little larger than the members: a new one is free most
        // of the time, an old one often another member's.
        var nextEmail = 0
        func member(_ identifier: Int) -> SpillMember {
            let email = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 0..<max(1, nextEmail), using: &random) : nextEmail
            if email == nextEmail { nextEmail += 1 }
            return SpillMember(identifier: identifier, email: "m\(email)@x", city: Self.cities[Int.random(in: 0..<4, using: &random)],
                               age: Int.random(in: 0..<25, using: &random))
        }
        for step in 0..<50 {
            let context = "seed \(seed), step \(step)"
            var working = reference
            var actions: [(Int, SpillMember?)] = []
            for _ in 0..<Int.random(in: 1...60, using: &random) {
                let identifier = Int.random(in: 0..<80, using: &random)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<70:
                    let added = member(identifier)
                    actions.append((identifier, added))
                    working[identifier] = added
                case 70..<99:
                    actions.append((identifier, nil))
                    working[identifier] = nil
                default:
                    actions.append((-1, nil))
                    working = [:]
                }
            }
            let refused = Self.hasDuplicateEmail(working)
            do {
                try store.write { transaction in
                    for (identifier, added) in actions {
                        if let added {
                            try transaction.add(added)
                        } else if identifier < 0 {
                            try transaction.deleteAll(SpillMember.self)
                        } else {
                            try transaction.delete(SpillMember.self, primaryKey: identifier)
                        }
                    }
                    // Read back inside: the transaction sees its own streamed writes.
                    let probe = Int.random(in: 0..<80, using: &random)
                    #expect(try transaction.object(SpillMember.self, primaryKey: probe) == working[probe], "\(context): inside, \(probe)")
                }
                #expect(!refused, "\(context): a duplicate email was committed")
                reference = working
                commits += 1
            } catch let error as StoreError {
                guard case .uniqueViolation(let typeName, let property, _) = error.kind else { throw error }
                #expect(refused && typeName == "SpillMember" && property == "email", "\(context): \(error)")
                refusals += 1
            }
            #expect(try Self.answers(store) == Self.expected(reference), "\(context)")
            if Int.random(in: 0..<8, using: &random) == 0 {
                // Closing writes a checkpoint (past a small tail), which merges the scratch runs
                // into the log; a low interval then checkpoints after most commits.
                try store.close()
                store = try Self.store(path, spilled: true, checkpointInterval: Bool.random(using: &random) ? 2_000 : 1 << 30, encrypted: encrypted)
                #expect(try Self.answers(store) == Self.expected(reference), "\(context), reopened")
            }
        }
        try store.close()
        #expect(refusals > 3 && commits > 10, "seed \(seed): \(refusals) refused, \(commits) committed")
        // Opened without spilling (its indexes rebuilt from the checkpoint and the log).
        store = try Self.store(path, spilled: false, checkpointInterval: 1 << 30, encrypted: encrypted)
        #expect(try Self.answers(store) == Self.expected(reference), "seed \(seed), reopened without spilling")
        try store.close()
    }

    /// A streamed transaction of many members whose last one takes a committed member's email:
    /// refused whole, with the entries of its earlier members in scratch runs.
    @Test("a committed email taken again after many spilled entries refuses the transaction")
    func committedEmailTakenAgain() throws {
        let directory = TemporaryDirectory()
        let store = try Self.store(directory.file("taken.store"), spilled: true, checkpointInterval: 1 << 30)
        try store.write { try $0.add(SpillMember(identifier: 0, email: "first@x", city: "Lyon", age: 3)) }
        let refused = #expect(throws: StoreError.self) {
            try store.write { transaction in
                for identifier in 1..<400 {
                    try transaction.add(SpillMember(identifier: identifier, email: "m\(identifier)@x", city: "Paris", age: identifier % 20))
                }
                try transaction.add(SpillMember(identifier: 400, email: "first@x", city: "Rennes", age: 1))
            }
        }
        #expect(refused?.kind == .uniqueViolation(typeName: "SpillMember", property: "email", value: "\"first@x\""))
        #expect(try Self.answers(store) == Self.expected([0: SpillMember(identifier: 0, email: "first@x", city: "Lyon", age: 3)]))
        // The refusal left nothing behind: the same members without the clash commit.
        var reference = [0: SpillMember(identifier: 0, email: "first@x", city: "Lyon", age: 3)]
        try store.write { transaction in
            for identifier in 1..<400 {
                let member = SpillMember(identifier: identifier, email: "m\(identifier)@x", city: "Paris", age: identifier % 20)
                try transaction.add(member)
                reference[identifier] = member
            }
        }
        #expect(try Self.answers(store) == Self.expected(reference))
        // A few members beside 400: each new email is looked up rather than the index read
        // whole, those spilled read back from the scratch runs; the clash comes first.
        let refusedAgain = #expect(throws: StoreError.self) {
            try store.write { transaction in
                try transaction.add(SpillMember(identifier: 500, email: "m7@x", city: "Rennes", age: 1))
                for identifier in 501..<520 {
                    try transaction.add(SpillMember(identifier: identifier, email: "n\(identifier)@x", city: "Lyon", age: 2))
                }
            }
        }
        #expect(refusedAgain?.kind == .uniqueViolation(typeName: "SpillMember", property: "email", value: "\"m7@x\""))
        #expect(try Self.answers(store) == Self.expected(reference))
        try store.close()
    }
}
