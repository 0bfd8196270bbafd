import Foundation
import Testing
import TestSupport
import MirrorStore

/// Compound indexes: queries with equalities on a prefix of the index's properties (and perhaps a
/// range on the next) read one range of it and answer as `Array.filter` does; a unique one
/// refuses two objects agreeing on every property (but not when one of them is `nil`), checked
/// against a plain dictionary through random transactions; declarations that cannot be indexed
/// are typed errors naming the property.
@Suite struct CompoundIndexTests {
    static let seed = SeededRandom.seed(default: 0x290_0004)

    final class Player: Persistable {
        var id = 0
        var team = ""
        var number = 0
        var city: String?
        var age = 0
        var score = 0.0
        init() {}
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [.unique("team", "number"), ["city", "age", "score"], ["age", "number"]] }

        init(id: Int, team: String, number: Int, city: String?, age: Int, score: Double) {
            self.id = id
            self.team = team
            self.number = number
            self.city = city
            self.age = age
            self.score = score
        }
    }

    /// Three-property compound indexes over strings, dates and integers (negative too), whose
    /// keys' bytes hold zero bytes, digits and spaces.
    final class Shift: Persistable {
        var id = 0
        var site = ""
        var day = Date(timeIntervalSinceReferenceDate: 0)
        var slot = 0
        var code: Int?
        init() {}
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [["site", "day", "slot"], ["code", "slot", "site"]] }
    }

    static let sites = ["A1", "A2", "A 1", "A", "", "a\u{0}", "a\u{0}b", "Z\u{1C}"]
    static let days = [-86_400.0, -0.5, 0, 0.125, 86_400, 1e9].map(Date.init(timeIntervalSinceReferenceDate:))

    struct Seat: Persistable {
        var id = 0
        var row = 0
        var label: String?
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [.unique("row", "label")] }
    }

    struct Unknown: Persistable {
        var id = 0
        var team = ""
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [["team", "nickname"]] }
    }

    struct Alone: Persistable {
        var id = 0
        var team = ""
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [["team"]] }
    }

    struct Listed: Persistable {
        var id = 0
        var team = ""
        var tags: [String] = []
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [["team", "tags"]] }
    }

    static let teams = ["red", "blue", "Élan", "E\u{301}lan", ""]
    static let cities: [String?] = [nil, "Oslo", "Lima", "Rome"]

    /// Players with unique (team, number) pairs.
    static func players(_ random: inout SeededRandom, count: Int) -> [Player] {
        var taken = Set<String>()
        var players: [Player] = []
        var id = 1
        while players.count < count {
            let team = random.pick(teams)
            let number = Int.random(in: 0..<60, using: &random)
            guard taken.insert("\(TextKey(team))/\(number)").inserted else { continue }
            players.append(Player(
                id: id, team: team, number: number, city: random.pick(cities), age: Int.random(in: 18...40, using: &random),
                score: random.chance(10) ? -0.0 : Double(Int.random(in: -3...3, using: &random)) / 2))
            id += 1
        }
        return players
    }

    /// A team name as `==` on strings sees it: canonically equivalent names are one team.
    struct TextKey: Hashable, CustomStringConvertible {
        let text: String
        init(_ text: String) { self.text = text }
        var description: String { text.precomposedStringWithCanonicalMapping }
    }

    @Test("prefix equalities and a range read the compound index and answer as Array.filter does")
    func queries() throws {
        var random = SeededRandom(seed: Self.seed)
        let players = Self.players(&random, count: 240)
        let directory = TemporaryDirectory()
        let path = directory.file("players.store")
        do {
            let store = try Store(path: path, models: [Player.self])
            try store.write { try $0.add(contentsOf: players) }
            try check(store, players, context: "fresh")
            try store.close()
        }
        let store = try Store(path: path, models: [Player.self])
        try check(store, players, context: "reopened")
        try store.close()
    }

    private func check(_ store: Store, _ players: [Player], context: String) throws {
        let place = "seed \(Self.seed), \(context)"
        func expect(_ predicate: Predicate<Player>, index: String?, exact: Bool? = nil, _ line: Int = #line) throws {
            let results = try store.objects(Player.self).filter(predicate)
            let expected = try players.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(results.map(\.id) == expected, "\(place), line \(line): \(results.plan)")
            #expect(results.plan.indexName == index, "\(place), line \(line): \(results.plan)")
            if let exact { #expect((results.plan.filter == .none) == exact, "\(place), line \(line): \(results.plan)") }
        }
        for team in Self.teams {
            for number in [0, 7, 30, 59, 60] {
                let below = number + 10
                try expect(#Predicate { $0.team == team && $0.number == number }, index: "Player.team+number", exact: true)
                try expect(#Predicate { $0.number == number && $0.team == team }, index: "Player.team+number", exact: true)
                try expect(#Predicate { $0.team == team && $0.number > number }, index: "Player.team+number", exact: true)
                try expect(#Predicate { $0.team == team && $0.number >= number && $0.number < below }, index: "Player.team+number", exact: true)
                try expect(#Predicate { $0.team == team && $0.number <= number && $0.score > 0 }, index: "Player.team+number", exact: false)
            }
            try expect(#Predicate { $0.team == team }, index: "Player.team+number", exact: true)
            try expect(#Predicate { $0.team == team && $0.city == nil }, index: "Player.team+number", exact: false)
        }
        // Not a prefix of any compound index: every object is tested.
        try expect(#Predicate { $0.number == 7 }, index: nil)
        for city in Self.cities {
            for age in [18, 25, 40, 41] {
                try expect(#Predicate { $0.city == city && $0.age == age }, index: "Player.city+age+score", exact: true)
                try expect(#Predicate { $0.city == city && $0.age < age }, index: "Player.city+age+score", exact: true)
                try expect(#Predicate { $0.city == city && $0.age == age && $0.score == 0 }, index: "Player.city+age+score", exact: true)
                try expect(#Predicate { $0.city == city && $0.age == age && $0.score >= 0.5 }, index: "Player.city+age+score", exact: nil)
            }
            try expect(#Predicate { $0.city == city }, index: "Player.city+age+score", exact: true)
        }
        try expect(#Predicate { $0.city != nil && $0.age == 20 }, index: "Player.age+number", exact: false)

        // Sorts that follow a compound index read it in order, filtered by its prefix or not.
        let byNumber = SortDescriptor(\Player.number)
        for team in Self.teams {
            let sorted = try store.objects(Player.self).filter(#Predicate { $0.team == team }).sorted(using: byNumber)
            #expect(sorted.map(\.id) == players.filter { $0.team == team }.sorted(using: byNumber).map(\.id), "\(place): \(sorted.plan)")
            #expect(sorted.plan.order == .index(name: "Player.team+number", ascending: true), "\(place): \(sorted.plan)")
        }
        for order in [SortOrder.forward, .reverse] {
            let descriptors = [SortDescriptor(\Player.age, order: order), SortDescriptor(\Player.number, order: order)]
            let sorted = try store.objects(Player.self).sorted(using: descriptors)
            #expect(sorted.map(\.id) == players.sorted(using: descriptors).map(\.id), "\(place): \(sorted.plan)")
            #expect(sorted.plan.order == .index(name: "Player.age+number", ascending: order == .forward), "\(place): \(sorted.plan)")
        }

        let red = try store.objects(Player.self).filter(#Predicate { $0.team == "red" && $0.number >= 10 })
        #expect(red.plan.access == .index(name: "Player.team+number", range: "team == \"red\" and number >= 10"))
    }

    @Test("three-property indexes of strings, dates and integers answer equalities and a range on any next property as Array.filter does")
    func threeProperties() throws {
        var random = SeededRandom(seed: Self.seed)
        let shifts = (1...400).map { id in
            let shift = Shift()
            shift.id = id
            shift.site = random.pick(Self.sites)
            shift.day = random.pick(Self.days)
            shift.slot = Int.random(in: -40...40, using: &random)
            shift.code = random.chance(20) ? nil : Int.random(in: -2...2, using: &random)
            return shift
        }
        let directory = TemporaryDirectory()
        let path = directory.file("shifts.store")
        do {
            let store = try Store(path: path, models: [Shift.self])
            try store.write { try $0.add(contentsOf: shifts) }
            try checkShifts(store, shifts, context: "fresh")
            try store.close()
        }
        let store = try Store(path: path, models: [Shift.self])
        try checkShifts(store, shifts, context: "reopened")
        try store.close()
    }

    private func checkShifts(_ store: Store, _ shifts: [Shift], context: String) throws {
        let place = "seed \(Self.seed), \(context)"
        func expect(_ predicate: Predicate<Shift>, index: String, exact: Bool, _ line: Int = #line) throws {
            let results = try store.objects(Shift.self).filter(predicate)
            let expected = try shifts.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(results.map(\.id) == expected, "\(place), line \(line): \(results.plan)")
            #expect(results.count == expected.count, "\(place), line \(line): \(results.plan)")
            #expect(results.plan.indexName == index, "\(place), line \(line): \(results.plan)")
            #expect((results.plan.filter == .none) == exact, "\(place), line \(line): \(results.plan)")
        }
        let byDay = "Shift.site+day+slot", byCode = "Shift.code+slot+site"
        for site in Self.sites {
            for (offset, day) in Self.days.enumerated() {
                let later = Self.days[min(offset + 2, Self.days.count - 1)]
                for slot in [-41, -7, 0, 1, 40] {
                    let above = slot + 12
                    try expect(#Predicate { $0.site == site && $0.day == day && $0.slot == slot }, index: byDay, exact: true)
                    try expect(#Predicate { $0.slot == slot && $0.day == day && $0.site == site }, index: byDay, exact: true)
                    try expect(#Predicate { $0.site == site && $0.day == day && $0.slot > slot }, index: byDay, exact: true)
                    try expect(#Predicate { $0.site == site && $0.day == day && $0.slot <= slot }, index: byDay, exact: true)
                    try expect(#Predicate { $0.site == site && $0.day == day && $0.slot >= slot && $0.slot < above }, index: byDay, exact: true)
                }
                try expect(#Predicate { $0.site == site && $0.day == day }, index: byDay, exact: true)
                try expect(#Predicate { $0.site == site && $0.day >= day && $0.day < later }, index: byDay, exact: true)
                try expect(#Predicate { $0.site == site && $0.day > day }, index: byDay, exact: true)
            }
            for code in [nil, -2, 0, 2] as [Int?] {
                for slot in [-7, 0, 40] {
                    // A range of strings is widened and each candidate tested (see `TextOrder`).
                    try expect(#Predicate { $0.code == code && $0.slot == slot && $0.site >= site }, index: byCode, exact: false)
                    try expect(#Predicate { $0.code == code && $0.slot == slot && $0.site < site }, index: byCode, exact: false)
                    try expect(#Predicate { $0.code == code && $0.slot == slot && $0.site == site }, index: byCode, exact: true)
                }
                try expect(#Predicate { $0.code == code && $0.slot > -3 }, index: byCode, exact: true)
            }
        }
    }

    @Test("a unique compound index refuses two objects agreeing on every property, as a dictionary would, but not with nil")
    func uniqueness() throws {
        var random = SeededRandom(seed: Self.seed)
        let store = try Store.inMemory(models: [Seat.self])
        var reference: [Int: Seat] = [:]
        func clashes(_ seat: Seat) -> Bool {
            guard let label = seat.label else { return false }
            return reference.values.contains { $0.id != seat.id && $0.row == seat.row && $0.label.map(TextKey.init)?.description == TextKey(label).description }
        }
        var refused = 0
        for step in 0..<600 {
            let seat = Seat(id: Int.random(in: 1...40, using: &random), row: Int.random(in: 1...4, using: &random),
                            label: random.pick([nil, "A", "B", "C", "Å", "A\u{30A}"]))
            if random.chance(15) {
                try store.write { try $0.delete(Seat.self, primaryKey: seat.id) }
                reference[seat.id] = nil
                continue
            }
            do {
                try store.write { try $0.add(seat) }
                #expect(!clashes(seat), "seed \(Self.seed), step \(step): a clash was written")
                reference[seat.id] = seat
            } catch let error as StoreError {
                #expect(clashes(seat), "seed \(Self.seed), step \(step): refused without a clash: \(error)")
                refused += 1
                guard case .uniqueViolation(let typeName, let property, _) = error.kind else {
                    Issue.record("seed \(Self.seed), step \(step): \(error)")
                    continue
                }
                #expect(typeName == "Seat" && property == "row+label")
                #expect(error.description.hasSuffix("which a unique compound index forbids; nothing was written."))
            }
            let stored = try store.objects(Seat.self).all()
            #expect(stored.map(\.id) == reference.keys.sorted(), "seed \(Self.seed), step \(step)")
        }
        #expect(refused > 20 && reference.values.filter { $0.label == nil }.count > 1)
    }

    @Test("a compound index that cannot be made is a typed error naming the property")
    func badDeclarations() throws {
        #expect(throws: MappingError.self) { try Store.inMemory(models: [Unknown.self]) }
        do {
            _ = try Store.inMemory(models: [Unknown.self])
        } catch let error as MappingError {
            #expect(error.description == "Unknown.nickname is named in compoundIndexes, but Unknown has no stored property by that name.")
        }
        do {
            _ = try Store.inMemory(models: [Alone.self])
            Issue.record("a compound index of one property was made")
        } catch let error as MappingError {
            #expect(error.description.contains("the compound index team must name two or more different properties"))
        }
        do {
            _ = try Store.inMemory(models: [Listed.self])
            Issue.record("a compound index of an array was made")
        } catch let error as MappingError {
            #expect(error.description.contains("Listed.tags"))
            #expect(error.description.contains("cannot include a [String] property"))
        }
    }
}
