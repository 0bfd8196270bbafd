import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Compound index keys kept as bytes (``IndexTuple``) order, equal and hash exactly as their
/// components compared one by one as `IndexKey`s do, on seeded random tuples with every kind of
/// component (numbers of different kinds side by side, NaN, `-0.0`, strings with zero bytes,
/// nested tuples, `greatest`); damaged bytes decode without trapping.
@Suite struct IndexTupleTests {
    static let seed = SeededRandom.seed(default: 0x1D_E7_0001)

    /// Few distinct values, so that tuples often agree on their first components and differ
    /// where kinds meet (an integer, an unsigned and a double of the same value).
    static func component(_ random: inout SeededRandom, depth: Int = 0) -> IndexKey {
        switch Int.random(in: 0..<(depth < 2 ? 10 : 9), using: &random) {
        case 0: return .null
        case 1: return .bool(random.chance(50))
        case 2: return .integer(random.chance(50) ? Int64.random(in: -3...3, using: &random) : random.integer(Int64.self))
        case 3: return .unsigned(random.chance(50) ? UInt64.random(in: 0...3, using: &random) : random.integer(UInt64.self))
        case 4: return .double(random.chance(50) ? Double(Int.random(in: -3...3, using: &random)) / 2 : random.double())
        case 5: return .string(random.pick(["", "a", "a\u{0}", "a\u{0}b", "ab", "\u{1C}", "\u{1D}", " ", "!", "é"]))
        case 6: return .string(random.string())
        case 7: return random.chance(10) ? .greatest : .bytes((0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick([0, 1, 0x1C, 0x1E, 0xFF]) })
        case 8: return .integer(Int64(1) << 53 + Int64.random(in: -1...1, using: &random))
        default: return .tuple(tuple(&random, depth: depth + 1))
        }
    }

    static func components(_ random: inout SeededRandom, depth: Int = 0) -> [IndexKey] {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in component(&random, depth: depth) }
    }

    static func tuple(_ random: inout SeededRandom, depth: Int = 0) -> IndexTuple {
        IndexTuple(components(&random, depth: depth))
    }

    /// A tuple that shares a prefix of `other`'s components, then goes its own way.
    static func neighbour(of other: [IndexKey], _ random: inout SeededRandom) -> [IndexKey] {
        Array(other.prefix(Int.random(in: 0...other.count, using: &random))) + components(&random)
    }

    @Test("the bytes order, equal and hash as the components do")
    func differential() {
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<20_000 {
            let a = Self.components(&random)
            let b = random.chance(70) ? Self.neighbour(of: a, &random) : Self.components(&random)
            let (left, right) = (IndexTuple(a), IndexTuple(b))
            let expected = IndexTuple.componentOrder(a, b)
            let place = "seed \(Self.seed): \(a) against \(b)"
            #expect(IndexTuple.order(left, right) == expected, "\(place)")
            #expect(IndexTuple.order(right, left) == IndexTuple.componentOrder(b, a), "\(place)")
            #expect((IndexKey.tuple(left) < .tuple(right)) == (expected < 0), "\(place)")
            let equal = a == b
            #expect((left == right) == equal, "\(place)")
            if equal { #expect(left.hashValue == right.hashValue, "\(place)") }
            #expect(left.components == a, "\(place)")
            #expect(left.containsNull == a.contains(.null), "\(place)")
            #expect(IndexKey.tuple(left).isUniquelyConstrained == !a.contains(.null), "\(place)")
        }
    }

    @Test("IndexKey.order, with its fast paths for some kinds, agrees with asking < both ways")
    func keyOrder() {
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<20_000 {
            let a = random.chance(30) ? IndexKey.double(random.double()) : Self.component(&random)
            let b = random.chance(30) ? IndexKey.double(random.double()) : Self.component(&random)
            for (lhs, rhs) in [(a, b), (b, a), (a, a)] {
                let expected = lhs < rhs ? -1 : rhs < lhs ? 1 : 0
                #expect(IndexKey.order(lhs, rhs) == expected, "seed \(Self.seed): \(lhs) against \(rhs)")
            }
        }
    }

    @Test("a prefix built one component at a time is the tuple of its components")
    func appending() {
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<2_000 {
            let components = Self.components(&random)
            var built = IndexTuple(capacity: 0)
            for component in components { built.append(component) }
            #expect(built == IndexTuple(components), "seed \(Self.seed): \(components)")
            let last = Self.component(&random)
            #expect(IndexTuple(components).appending(last) == IndexTuple(components + [last]), "seed \(Self.seed): \(components)")
        }
    }

    @Test("damaged bytes decode to some components and compare without trapping")
    func damaged() {
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<5_000 {
            var bytes = Self.tuple(&random).bytes
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !bytes.isEmpty: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 1 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            default: bytes += (0..<Int.random(in: 1...12, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            let damaged = IndexTuple(encoded: bytes)
            _ = damaged.components
            _ = damaged.containsNull
            _ = IndexTuple.order(damaged, Self.tuple(&random))
            _ = IndexKey.tuple(damaged).description
        }
    }

    @Test("tuples sort among other keys and by their components, the shorter first")
    func examples() {
        let keys: [IndexKey] = [
            .tuple(IndexTuple([.string("b")])), .tuple(IndexTuple([.string("a"), .integer(2)])), .greatest,
            .tuple(IndexTuple([.string("a"), .double(1.5)])), .tuple(IndexTuple([.string("a")])), .bytes([9]),
            .tuple(IndexTuple([.string("a"), .unsigned(1), .null])), .tuple(IndexTuple([.string("a"), .greatest])),
        ]
        #expect(keys.sorted() == [
            .bytes([9]), .tuple(IndexTuple([.string("a")])), .tuple(IndexTuple([.string("a"), .unsigned(1), .null])),
            .tuple(IndexTuple([.string("a"), .double(1.5)])), .tuple(IndexTuple([.string("a"), .integer(2)])),
            .tuple(IndexTuple([.string("a"), .greatest])), .tuple(IndexTuple([.string("b")])), .greatest,
        ])
        #expect(IndexKey.tuple(IndexTuple([.integer(3), .string("x")])).description == "(3, \"x\")")
    }
}
