import Synchronization

/// One of a query source's indexes, looked up on first use and then read without a lock: the
/// planner asks for an index on each query a kept source answers, and a lock taken for each cost
/// more than the rest of finding it (``TypeIndexes``).
///
/// Unsafe, and why it holds: the word is 0 (not looked up yet), 1 (the snapshot has no such
/// index: no object lies at address 1), or the pointer of an `Index` retained once, by
/// `publish(_:)`, which sets it only from 0 (a compare-exchange: a second publisher releases its
/// own index and returns the first's); it never changes after that, and `deinit` releases the
/// index, when no reader can hold the slot. A reader that sees the pointer (acquiring, paired with
/// the releasing exchange) sees the index fully made.
final class TypeIndexSlot: Sendable {
    private let word = Atomic<UInt>(0)

    /// The word of a slot whose snapshot has no such index.
    private static let absent: UInt = 1

    deinit {
        let word = word.load(ordering: .acquiring)
        guard word != Self.absent, let pointer = UnsafeRawPointer(bitPattern: word) else { return }
        Unmanaged<TypeIndexes.Index>.fromOpaque(pointer).release()
    }

    /// Whether the slot was looked up, and its index then (nil: the snapshot has none).
    var published: (isKnown: Bool, index: TypeIndexes.Index?) {
        let word = word.load(ordering: .acquiring)
        return (word != 0, word == 0 ? nil : Self.index(word))
    }

    /// The slot's index, made by `find` (nil: the snapshot has none) unless another reader
    /// published one first.
    func publish(_ find: () -> TypeIndexes.Index?) -> TypeIndexes.Index? {
        let found = find()
        let desired = found.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? Self.absent
        let (exchanged, original) = word.compareExchange(expected: 0, desired: desired, ordering: .acquiringAndReleasing)
        if exchanged { return found }
        // Another reader published first: its index is the slot's, and this one is not kept.
        if let found { Unmanaged.passUnretained(found).release() }
        return Self.index(original)
    }

    /// The index a published word (not 0) holds, retained for the caller; nil for `absent`.
    private static func index(_ word: UInt) -> TypeIndexes.Index? {
        guard word != absent, let pointer = UnsafeRawPointer(bitPattern: word) else { return nil }
        return Unmanaged<TypeIndexes.Index>.fromOpaque(pointer).takeUnretainedValue()
    }
}
