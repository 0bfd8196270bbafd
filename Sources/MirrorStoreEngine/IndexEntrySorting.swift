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
        case .string, .bytes:
            // The first seven bytes, in bits 60 to 5.
            return rank | ((bytesWindow(at: 0) ?? 0) >> 8) << 5
        }
    }

    /// 61 bits that order numbers as `IndexKey` does, NaN after every other number.
    private static func numberPrefix(_ value: Double) -> UInt64 {
        value.isNaN ? (1 << 61) - 1 : IndexTuple.orderedBits(of: value) >> 3
    }

    /// Eight bytes of a string or byte string from `offset` on, big-endian, padded with zeros
    /// (which ties rather than misorders); nil for any other key. Two keys whose bytes before
    /// `offset` are equal order as these do when they differ.
    func bytesWindow(at offset: Int) -> UInt64? {
        switch self {
        case .string(let value):
            if let window = value.utf8.withContiguousStorageIfAvailable({ Self.window($0, at: offset) }) { return window }
            return Array(value.utf8).withUnsafeBufferPointer { Self.window($0, at: offset) }
        case .bytes(let value): return value.withUnsafeBufferPointer { Self.window($0, at: offset) }
        default: return nil
        }
    }

    private static func window(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        var window: UInt64 = 0
        for position in offset..<(offset + 8) {
            window = window << 8 | UInt64(position < bytes.count ? bytes[position] : 0)
        }
        return window
    }
}

extension IndexEntry {
    /// `entries` in index order (`precedes`). The entries' `sortPrefix`es are sorted by radix,
    /// carrying each entry's position, and only entries whose prefixes tie are compared, with
    /// `precedes`: a bulk insert sorts every entry it adds, and comparing the entries themselves,
    /// copying them as it went, was most of its cost.
    static func sortedInIndexOrder(_ entries: [IndexEntry]) -> [IndexEntry] {
        guard entries.count > 64, entries.count <= Int(UInt32.max) else {
            return entries.sorted(by: precedes)
        }
        var prefixes = entries.map(\.key.sortPrefix)
        var positions = (0..<UInt32(entries.count)).map { $0 }
        radixSort(&prefixes, carrying: &positions)
        // Runs of equal prefixes: strings and byte strings by their next eight bytes, as long as
        // runs stay long (keys often share a long beginning: a scheme, a domain, a path), the
        // rest by the entries themselves.
        var runs = tiedRuns(prefixes, from: 0, offset: 7)
        while let (range, offset) = runs.popLast() {
            let first = entries[Int(positions[range.lowerBound])].key
            guard range.count > 16, offset < 64, first.bytesWindow(at: offset) != nil else {
                positions[range].sort { precedes(entries[Int($0)], entries[Int($1)]) }
                continue
            }
            var windows = positions[range].map { entries[Int($0)].key.bytesWindow(at: offset) ?? 0 }
            var slice = Array(positions[range])
            radixSort(&windows, carrying: &slice)
            positions.replaceSubrange(range, with: slice)
            runs += tiedRuns(windows, from: range.lowerBound, offset: offset + 8)
        }
        return positions.map { entries[Int($0)] }
    }

    /// The runs of two or more equal keys in sorted `keys`, each with `offset`, as positions of
    /// the whole sort (`keys` begins at `base`).
    static func tiedRuns(_ keys: [UInt64], from base: Int, offset: Int) -> [(Range<Int>, Int)] {
        var runs: [(Range<Int>, Int)] = []
        var start = 0
        while start < keys.count {
            var end = start + 1
            while end < keys.count, keys[end] == keys[start] { end += 1 }
            if end - start > 1 { runs.append(((base + start)..<(base + end), offset)) }
            start = end
        }
        return runs
    }

    /// Sorts `keys` ascending, least significant byte first, moving `values` with them; a byte
    /// every key shares (the rank bits, mostly) costs one counting pass and no moves.
    static func radixSort(_ keys: inout [UInt64], carrying values: inout [UInt32]) {
        var otherKeys = keys
        var otherValues = values
        var counts = [Int](repeating: 0, count: 256)
        for shift in stride(from: UInt64(0), to: 64, by: 8) {
            for index in counts.indices { counts[index] = 0 }
            for key in keys { counts[Int(truncatingIfNeeded: key >> shift) & 0xFF] += 1 }
            if counts.contains(keys.count) { continue }
            var total = 0
            for index in counts.indices {
                let count = counts[index]
                counts[index] = total
                total += count
            }
            for position in keys.indices {
                let digit = Int(truncatingIfNeeded: keys[position] >> shift) & 0xFF
                let target = counts[digit]
                counts[digit] = target + 1
                otherKeys[target] = keys[position]
                otherValues[target] = values[position]
            }
            swap(&keys, &otherKeys)
            swap(&values, &otherValues)
        }
    }
}
