import Foundation
import MirrorStore
import TestSupport

// A zoo of model shapes for the read-route tests: classes and structs, embedded classes and
// structs (one or several fields of one type, in optionals, arrays, dictionaries and nested in
// each other), links to-one and to-many, an inverse, sets, optionals of everything, and an
// immutable struct.

enum ZooMood: String, CaseIterable {
    case calm, busy, away
}

/// Embedded (no primary key), a struct.
struct ZooPoint: Persistable {
    var x = 0.0
    var y: Int?
    var label = ""
    init() {}
}

/// Embedded, a class.
final class ZooNote: Persistable {
    var text = ""
    var point: ZooPoint?
    var words: [String] = []
    var mood = ZooMood.calm
    init() {}
}

/// Embedded, a struct that nests embedded classes and structs.
struct ZooFrame: Persistable {
    var corner = ZooPoint()
    var inner: ZooPoint?
    var notes: [ZooNote] = []
    var byName: [String: ZooNote] = [:]
    init() {}
}

/// A link target with nothing of its own to link to.
final class ZooLeaf: Persistable {
    var id = 0
    var name = ""
    var weight: Double?
    init() {}
    static var primaryKey: String? { "id" }
}

/// Links to itself, possibly in cycles, with the inverse of that link.
final class ZooChain: Persistable {
    var id = 0
    var label = ""
    var next: ZooChain?
    var previous = LinkingObjects<ZooChain>(property: "next")
    init() {}
    static var primaryKey: String? { "id" }
}

final class ZooClassRoot: Persistable {
    var id = 0
    var first: ZooNote?
    var leaf: ZooLeaf?
    var second: ZooNote?
    var point = ZooPoint()
    var otherPoint: ZooPoint?
    var notes: [ZooNote] = []
    var points: [ZooPoint] = []
    var pointsByName: [String: ZooPoint] = [:]
    var optionalNotes: [ZooNote]?
    var frame: ZooFrame?
    var leaves: [ZooLeaf] = []
    var chain: ZooChain?
    var labels: Set<String> = []
    var maybeInts: [Int?] = []
    var stamp = Date(timeIntervalSinceReferenceDate: 0)
    var blob = Data()
    var uuid: UUID?
    var amount: Decimal?
    var mood: ZooMood?
    var grid: [[ZooPoint]] = []
    init() {}
    static var primaryKey: String? { "id" }
}

struct ZooStructRoot: Persistable {
    var id = 0
    var home = ZooPoint()
    var leaf: ZooLeaf?
    var work = ZooPoint()
    var note = ZooNote()
    var spare: ZooNote?
    var frames: [ZooFrame] = []
    var leaves: [ZooLeaf] = []
    var chain: ZooChain?
    var tagsByKey: [String: [String]] = [:]
    var codes: Set<Int> = []
    var ratio: Float = 0
    init() {}
    static var primaryKey: String? { "id" }
}

/// Immutable, with no `init()`: made field by field from the record.
struct ZooFrozen: Persistable {
    let id: Int
    let name: String
    let spot: ZooPoint
    let backup: ZooPoint?
    let leaf: ZooLeaf?
    let notes: [ZooNote]
    static var primaryKey: String? { "id" }
}

/// What the read-route tests need of a root model: its key, and queries written for its type.
protocol ZooRoot: Persistable {
    var id: Int { get }
    static func keys(below limit: Int) -> Predicate<Self>
    static var descendingKeys: SortDescriptor<Self> { get }
}

extension ZooClassRoot: ZooRoot {
    static func keys(below limit: Int) -> Predicate<ZooClassRoot> { #Predicate { $0.id < limit } }
    static var descendingKeys: SortDescriptor<ZooClassRoot> { SortDescriptor(\.id, order: .reverse) }
}

extension ZooStructRoot: ZooRoot {
    static func keys(below limit: Int) -> Predicate<ZooStructRoot> { #Predicate { $0.id < limit } }
    static var descendingKeys: SortDescriptor<ZooStructRoot> { SortDescriptor(\.id, order: .reverse) }
}

extension ZooFrozen: ZooRoot {
    static func keys(below limit: Int) -> Predicate<ZooFrozen> { #Predicate { $0.id < limit } }
    static var descendingKeys: SortDescriptor<ZooFrozen> { SortDescriptor(\.id, order: .reverse) }
}

extension ZooChain: ZooRoot {
    static func keys(below limit: Int) -> Predicate<ZooChain> { #Predicate { $0.id < limit } }
    static var descendingKeys: SortDescriptor<ZooChain> { SortDescriptor(\.id, order: .reverse) }
}

/// Random zoo models from a seed, linking to one shared pool of leaves and chain nodes.
struct ZooGenerator {
    var random: SeededRandom
    private(set) var leaves: [ZooLeaf] = []
    private(set) var chains: [ZooChain] = []

    init(seed: UInt64, leaves leafCount: Int = 24, chains chainCount: Int = 40) {
        random = SeededRandom(seed: seed)
        leaves = (0..<leafCount).map { id in
            let leaf = ZooLeaf()
            leaf.id = id
            leaf.name = random.string()
            leaf.weight = random.optional { $0.double() }
            return leaf
        }
        chains = (0..<chainCount).map { id in
            let chain = ZooChain()
            chain.id = id
            chain.label = random.string()
            return chain
        }
        for chain in chains where random.chance(70) {
            chain.next = random.pick(chains)
        }
    }

    mutating func text() -> String {
        random.chance(25) ? random.pick(["", "E\u{301}lodie", "Élodie", "👩‍👩‍👧", "a\u{0}b", "\u{10FFFF}"]) : random.string()
    }

    mutating func point() -> ZooPoint {
        var point = ZooPoint()
        point.x = random.chance(10) ? random.pick([0.0, -0.0, .infinity, -.infinity, .nan]) : random.double()
        point.y = random.optional { $0.integer() }
        point.label = text()
        return point
    }

    mutating func note() -> ZooNote {
        let note = ZooNote()
        note.text = text()
        note.point = maybe { $0.point() }
        note.words = (0..<random.count()).map { _ in text() }
        note.mood = random.pick(ZooMood.allCases)
        return note
    }

    mutating func frame() -> ZooFrame {
        var frame = ZooFrame()
        frame.corner = point()
        frame.inner = maybe { $0.point() }
        frame.notes = (0..<Int.random(in: 0...3, using: &random)).map { _ in note() }
        frame.byName = Dictionary((0..<Int.random(in: 0...3, using: &random)).map { _ in (text(), note()) }, uniquingKeysWith: { a, _ in a })
        return frame
    }

    /// `nil` about a third of the time, like `SeededRandom.optional`.
    mutating func maybe<T>(_ make: (inout ZooGenerator) -> T) -> T? {
        random.chance(35) ? nil : make(&self)
    }

    mutating func leaf() -> ZooLeaf? { random.optional { $0.pick(leaves) } }
    mutating func someLeaves() -> [ZooLeaf] { (0..<Int.random(in: 0...4, using: &random)).map { _ in random.pick(leaves) } }
    mutating func chain() -> ZooChain? { random.optional { $0.pick(chains) } }

    mutating func classRoot(id: Int) -> ZooClassRoot {
        let root = ZooClassRoot()
        root.id = id
        root.first = maybe { $0.note() }
        root.leaf = leaf()
        root.second = maybe { $0.note() }
        root.point = point()
        root.otherPoint = maybe { $0.point() }
        root.notes = (0..<Int.random(in: 0...3, using: &random)).map { _ in note() }
        root.points = (0..<Int.random(in: 0...3, using: &random)).map { _ in point() }
        root.pointsByName = Dictionary((0..<Int.random(in: 0...3, using: &random)).map { _ in (text(), point()) }, uniquingKeysWith: { a, _ in a })
        root.optionalNotes = maybe { generator in (0..<Int.random(in: 0...2, using: &generator.random)).map { _ in generator.note() } }
        root.frame = maybe { $0.frame() }
        root.leaves = someLeaves()
        root.chain = chain()
        root.labels = Set((0..<random.count()).map { _ in text() })
        root.maybeInts = (0..<random.count()).map { _ in random.optional { $0.integer() } }
        root.stamp = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)) / 8)
        root.blob = random.data()
        root.uuid = random.optional { $0.uuid() }
        root.amount = random.optional { Decimal($0.integer(Int32.self)) / 100 }
        root.mood = random.optional { $0.pick(ZooMood.allCases) }
        root.grid = (0..<Int.random(in: 0...2, using: &random)).map { _ in (0..<Int.random(in: 0...2, using: &random)).map { _ in point() } }
        return root
    }

    mutating func structRoot(id: Int) -> ZooStructRoot {
        var root = ZooStructRoot()
        root.id = id
        root.home = point()
        root.leaf = leaf()
        root.work = point()
        root.note = note()
        root.spare = maybe { $0.note() }
        root.frames = (0..<Int.random(in: 0...2, using: &random)).map { _ in frame() }
        root.leaves = someLeaves()
        root.chain = chain()
        root.tagsByKey = Dictionary((0..<Int.random(in: 0...3, using: &random)).map { _ in (text(), (0..<random.count()).map { _ in text() }) }, uniquingKeysWith: { a, _ in a })
        root.codes = Set((0..<random.count()).map { _ in random.integer(Int.self) })
        root.ratio = random.chance(10) ? random.pick([Float(-0.0), .infinity, .nan]) : random.float()
        return root
    }

    mutating func frozen(id: Int) -> ZooFrozen {
        ZooFrozen(
            id: id, name: text(), spot: point(), backup: maybe { $0.point() }, leaf: leaf(),
            notes: (0..<Int.random(in: 0...2, using: &random)).map { _ in note() })
    }
}
