import Foundation

/// A small, fast, repeatable generator (SplitMix64, with its published constants), so every
/// random test replays from its seed. The one copy every test target shares.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed for a randomized suite: `MIRRORSTORE_SEED` when set, to replay a failure, or the
    /// suite's fixed default so CI runs are deterministic.
    public static func seed(default value: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["MIRRORSTORE_SEED"].flatMap { UInt64($0) } ?? value
    }

    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    public mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }

    /// One of `elements`, chosen by the generator alone whatever order they come in. A dictionary's
    /// or set's order changes from one process to the next (Swift seeds its hashing per process),
    /// so `randomElement(using:)` on its keys would make a seeded test differ from run to run.
    public mutating func pick<C: Collection>(from elements: C, by areInIncreasingOrder: (C.Element, C.Element) -> Bool) -> C.Element? {
        guard !elements.isEmpty else { return nil }
        return elements.sorted(by: areInIncreasingOrder)[Int.random(in: 0..<elements.count, using: &self)]
    }

    public mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        chance(30) ? pick([T.min, T.max, 0, 1, T.max / 2]) : T.random(in: T.min...T.max, using: &self)
    }

    public mutating func double() -> Double {
        if chance(30) {
            return pick([.nan, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.ulpOfOne])
        }
        return Double(bitPattern: next())
    }

    public mutating func float() -> Float {
        if chance(30) { return pick([.nan, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude]) }
        return Float(bitPattern: UInt32(truncatingIfNeeded: next()))
    }

    public mutating func string() -> String {
        switch Int.random(in: 0..<5, using: &self) {
        case 0: return ""
        case 1: return pick(["é", "e\u{301}", "👩‍👩‍👧", "日本語", "\u{0}", "Ω≈ç√", "\"quoted\"\n\ttab", "🇫🇷"])
        case 2:
            return String((0..<Int.random(in: 1...40, using: &self)).map { _ in
                Character(UnicodeScalar(UInt8.random(in: 32...126, using: &self)))
            })
        default:
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...24, using: &self) {
                let value = UInt32.random(in: 0...0x10FFFF, using: &self)
                scalars.append(UnicodeScalar(value) ?? "?")
            }
            return String(scalars)
        }
    }

    public mutating func data() -> Data {
        Data((0..<Int.random(in: 0...(chance(5) ? 4096 : 32), using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) })
    }

    public mutating func uuid() -> UUID {
        let (high, low) = (next(), next())
        return withUnsafeBytes(of: (high, low)) { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }

    public mutating func count() -> Int {
        chance(1) ? Int.random(in: 100...1000, using: &self) : Int.random(in: 0...6, using: &self)
    }

    public mutating func optional<T>(_ make: (inout SeededRandom) -> T) -> T? {
        chance(35) ? nil : make(&self)
    }

    /// `bytes` with one bit flipped, its end cut off, or a byte inserted: a damaged copy for
    /// differential tests of readers.
    public mutating func damaged(_ bytes: [UInt8]) -> [UInt8] {
        var damaged = bytes
        switch Int.random(in: 0..<3, using: &self) {
        case 0 where !damaged.isEmpty:
            damaged[Int.random(in: 0..<damaged.count, using: &self)] ^= UInt8(1 << Int.random(in: 0..<8, using: &self))
        case 1 where !damaged.isEmpty:
            damaged.removeLast(Int.random(in: 1...damaged.count, using: &self))
        default:
            damaged.insert(UInt8.random(in: 0...255, using: &self), at: Int.random(in: 0...damaged.count, using: &self))
        }
        return damaged
    }
}
