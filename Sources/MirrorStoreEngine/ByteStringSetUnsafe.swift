#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A set of byte strings for ``ObjectKeySet``, built once and searched many times: the strings
/// one after another in one buffer, and an open-addressing table whose slots hold a string's
/// number and 32 bits of its hash, so that a search compares bytes (with `memcmp`) only with a
/// string whose hash bits match; the table is at most half full. (`ByteKeyMap` compares the bytes
/// of every string its probe passes, which cost most of a search that misses.)
struct ByteStringSet: Sendable {
    private var bytes: [UInt8] = []
    /// Where each string ends in `bytes` (it starts where the one before ends).
    private var ends: [Int] = []
    /// 0 is empty, else the string's hash's high 32 bits, then its number plus one (a set of
    /// more than 2³² - 1 strings would not fit in memory).
    private var slots: [UInt64] = []
    /// The number of strings held.
    private(set) var count = 0

    /// Makes room for `count` strings without growing the table.
    mutating func reserveCapacity(_ count: Int) {
        guard count > 0 else { return }
        ends.reserveCapacity(count)
        bytes.reserveCapacity(count.multipliedReportingOverflow(by: 16).overflow ? count : count * 16)
        if Self.slotCount(for: count) > slots.count { rebuild(slots: Self.slotCount(for: count)) }
    }

    /// Whether the set holds `key`.
    func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        guard count > 0 else { return false }
        return find(key, hash: Self.hash(key)) == nil
    }

    /// Adds `key`, if the set does not hold it.
    mutating func insert(_ key: UnsafeRawBufferPointer) {
        if Self.slotCount(for: count + 1) > slots.count { rebuild(slots: Self.slotCount(for: count + 1)) }
        let hash = Self.hash(key)
        guard let slot = find(key, hash: hash) else { return }
        bytes.append(contentsOf: key)
        ends.append(bytes.count)
        count += 1
        slots[slot] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(count)
    }

    /// Slots for `count` strings: a power of two at most half full.
    private static func slotCount(for count: Int) -> Int {
        var slots = 16
        while slots / 2 < count { slots *= 2 }
        return slots
    }

    /// The empty slot where `key` would go, or nil when the set holds it.
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        slots.withUnsafeBufferPointer { slots in
            bytes.withUnsafeBytes { stored in
                ends.withUnsafeBufferPointer { ends in
                    let mask = slots.count - 1
                    let tag = hash & 0xFFFF_FFFF_0000_0000
                    var slot = Int(truncatingIfNeeded: hash) & mask
                    while true {
                        let held = slots[slot]
                        if held == 0 { return slot }
                        if held & 0xFFFF_FFFF_0000_0000 == tag {
                            let number = Int(truncatingIfNeeded: held & 0xFFFF_FFFF) - 1
                            let start = number == 0 ? 0 : ends[number - 1]
                            let length = ends[number] - start
                            if length == key.count {
                                guard length > 0, let held = stored.baseAddress, let wanted = key.baseAddress else { return nil }
                                if memcmp(held + start, wanted, length) == 0 { return nil }
                            }
                        }
                        slot = (slot + 1) & mask
                    }
                }
            }
        }
    }

    private mutating func rebuild(slots count: Int) {
        slots = Array(repeating: 0, count: count)
        let mask = count - 1
        bytes.withUnsafeBytes { stored in
            var start = 0
            for (number, end) in ends.enumerated() {
                let hash = Self.hash(UnsafeRawBufferPointer(rebasing: stored[start..<end]))
                var slot = Int(truncatingIfNeeded: hash) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(number + 1)
                start = end
            }
        }
    }

    /// A hash of `key`'s bytes, eight at a time, each word folded in by SplitMix64's finalizer
    /// from a seed drawn once per process, so that keys a user chose cannot be made to collide.
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var state = seed &+ UInt64(truncatingIfNeeded: key.count)
        var position = 0
        while position &+ 8 <= key.count {
            state = ByteKeyMap.mix(state ^ UInt64(littleEndian: key.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
            position &+= 8
        }
        let remaining = key.count &- position
        var word: UInt64 = 0
        if remaining > 0, key.count >= 8 {
            // The last eight bytes, of which the ones not folded in yet are the high ones.
            word = UInt64(littleEndian: key.loadUnaligned(fromByteOffset: key.count &- 8, as: UInt64.self)) >> UInt64(64 &- 8 &* remaining)
        } else {
            var shift: UInt64 = 0
            while position < key.count {
                word |= UInt64(key[position]) << shift
                shift &+= 8
                position &+= 1
            }
        }
        return ByteKeyMap.mix(state ^ word)
    }

    private static let seed = UInt64.random(in: 0...UInt64.max)
}
