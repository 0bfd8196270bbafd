extension IndexKey {
    /// A number whose order never contradicts the keys': when one key's prefix is below
    /// another's, that key orders first, and equal keys have equal prefixes. Sorting compares
    /// these first and the keys themselves only where two prefixes tie, so most comparisons of a
    /// bulk sort are one integer comparison instead of a switch over two enums and a `memcmp`.
    ///
    /// The top three bits are the kind's rank; below them, 61 bits of the value: a number's
    /// ordered bits (integers as the nearest double, which preserves their order without
    /// separating any two keys the order finds equal), the first seven bytes of a string or byte
    /// string (a shorter one padded with zeros, which ties rather than misorders), nothing for a
    /// tuple (whose byte order is not the whole story for numbers).
    var sortPrefix: UInt64 {
        let rank = UInt64(self.rank) << 61
        switch self {
        case .null, .tuple, .greatest: return rank
        case .bool(let value): return rank | (value ? 1 : 0)
        case .integer(let value): return rank | Self.numberPrefix(Double(value))
        case .unsigned(let value): return rank | Self.numberPrefix(Double(value))
        case .double(let value): return rank | Self.numberPrefix(value)
        case .string(let value):
            if let prefix = value.utf8.withContiguousStorageIfAvailable(Self.bytesPrefix) { return rank | prefix }
            return rank | Self.bytesPrefix(Array(value.utf8))
        case .bytes(let value): return rank | value.withUnsafeBufferPointer(Self.bytesPrefix)
        }
    }

    /// 61 bits that order numbers as `IndexKey` does, NaN after every other number.
    private static func numberPrefix(_ value: Double) -> UInt64 {
        value.isNaN ? (1 << 61) - 1 : IndexTuple.orderedBits(of: value) >> 3
    }

    /// The first seven bytes, big-endian, in bits 60 to 5.
    private static func bytesPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var prefix: UInt64 = 0
        for position in 0..<7 {
            prefix = prefix << 8 | UInt64(position < bytes.count ? bytes[position] : 0)
        }
        return prefix << 5
    }

    private static func bytesPrefix(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer(bytesPrefix)
    }
}

extension IndexEntry {
    /// `entries` in index order (`precedes`). The sort moves pairs of a key's `sortPrefix` and a
    /// position, and compares the entries only where prefixes tie: a bulk insert sorts every
    /// entry it adds, and comparing the entries themselves, copying them as it went, was most of
    /// its cost.
    static func sortedInIndexOrder(_ entries: [IndexEntry]) -> [IndexEntry] {
        guard entries.count > 1, entries.count <= Int(UInt32.max) else {
            return entries.sorted(by: precedes)
        }
        var order = entries.indices.map { (prefix: entries[$0].key.sortPrefix, position: UInt32(truncatingIfNeeded: $0)) }
        entries.withUnsafeBufferPointer { entries in
            order.sort { a, b in
                if a.prefix != b.prefix { return a.prefix < b.prefix }
                return precedes(entries[Int(a.position)], entries[Int(b.position)])
            }
        }
        return order.map { entries[Int($0.position)] }
    }
}
