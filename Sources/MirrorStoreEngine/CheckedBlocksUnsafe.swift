import Synchronization

/// Which blocks of one run (or regions of a checkpoint's covered log) have passed their
/// checksum: a bit per block, shared by every snapshot, so each block is hashed once however
/// often it is read.
///
/// The bits are atomic words, not a locked array: every read of a run block asks, and a lock
/// taken and released for each answer cost more than the search in the block. A block another
/// thread is checking at the same time may be hashed twice, which is harmless: both find the same
/// bytes and set the same bit.
///
/// The only raw memory here is the words' allocation, made whole at `init` and freed at `deinit`;
/// every index is checked against it.
final class CheckedBlocks: @unchecked Sendable {
    // @unchecked: `words` is written only through its atomics, and allocated, initialised and
    // freed only in `init` and `deinit`, when no other thread can hold the object.
    /// One bit per block, `(count + 63) / 64` words, allocated and initialised at `init`.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private let wordCount: Int
    /// How many blocks the bits describe.
    private let total: Int
    /// How many bits are set.
    private let checked = Atomic<Int>(0)

    init(count: Int) {
        total = max(count, 0)
        wordCount = (total + 63) / 64
        words = .allocate(capacity: max(wordCount, 1))
        for word in 0..<wordCount {
            (words + word).initialize(to: Atomic(0))
        }
    }

    deinit {
        words.deinitialize(count: wordCount)
        words.deallocate()
    }

    /// Whether block `index` has been checked; false for an index outside the blocks.
    @inline(__always)
    func contains(_ index: Int) -> Bool {
        guard index >= 0, index < total else { return false }
        // Acquiring: a block found checked was checked before, with everything that check wrote.
        return words[index &>> 6].load(ordering: .acquiring) & (1 &<< UInt64(index & 63)) != 0
    }

    /// Whether every block has been checked.
    var isComplete: Bool { checked.load(ordering: .acquiring) == total }

    /// Marks `index` checked and returns how many are (an index outside the blocks changes nothing).
    @discardableResult
    func insert(_ index: Int) -> Int {
        guard index >= 0, index < total else { return checked.load(ordering: .acquiring) }
        let bit: UInt64 = 1 &<< UInt64(index & 63)
        let before = words[index &>> 6].bitwiseOr(bit, ordering: .acquiringAndReleasing).oldValue
        if before & bit != 0 { return checked.load(ordering: .acquiring) }
        return checked.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
    }
}
