/// Puts value locations in file order in linear time: a least-significant-digit radix sort on
/// their offsets, a few passes of counting and scattering.
///
/// Keys come out of the key index in hash order, so reading values that way jumps around the
/// file and misses the processor's caches on nearly every value; in file order the reads are
/// sequential and the hardware prefetches them. A comparison sort of the locations would cost
/// more than the misses it saves.
enum FileOrder {
    /// One value: its packed location (`ValueLocation.packed`, offset in the high bits) and what
    /// the caller needs to find its key again.
    struct Item: Sendable {
        var packed: UInt64
        var payload: Int64
    }

    /// One type's value locations in file order, as a scan computes them and a type's
    /// `Memo` keeps them; with keys other than integers, each item's payload is the key's
    /// position in `keys`.
    struct Sorted: Sendable {
        let items: [Item]
        let keys: [StorageKey]
    }

    /// Sorts `items` by offset; `largestOffset` bounds the passes needed.
    static func sort(_ items: inout [Item], largestOffset: UInt64) {
        guard items.count > 1 else { return }
        // As few passes as digits of at most 16 bits allow: one for files up to 64 KiB, two up to 4 GiB.
        let offsetBits = UInt64(max(1, 64 - largestOffset.leadingZeroBitCount))
        let passes = (offsetBits + 15) / 16
        let digitBits = (offsetBits + passes - 1) / passes
        let buckets = 1 << Int(digitBits)
        let mask = UInt64(buckets - 1)
        var scratch = items
        var counts = [Int](repeating: 0, count: buckets)
        var shift: UInt64 = 24  // The packed length sits below the offset.
        while shift < 24 + offsetBits {
            for index in counts.indices { counts[index] = 0 }
            for item in items { counts[Int((item.packed >> shift) & mask)] += 1 }
            var start = 0
            for index in counts.indices {
                let count = counts[index]
                counts[index] = start
                start += count
            }
            for item in items {
                let digit = Int((item.packed >> shift) & mask)
                scratch[counts[digit]] = item
                counts[digit] += 1
            }
            swap(&items, &scratch)
            shift += digitBits
        }
    }
}
