import Synchronization

/// The objects of the first positions of an `IndexPositions`, as a read ahead read them: never
/// changed once published.
final class FirstObjects: Sendable {
    let objects: [StorageKey]

    init(_ objects: [StorageKey]) {
        self.objects = objects
    }
}

/// Publishing `FirstObjects` once, read without a lock. The reference lives in an atomic word as
/// a raw pointer: `AtomicLazyReference` does the same safely, but its `load` is not inlined and
/// cost several times the lock it replaces.
///
/// Unsafe, and why it holds: the word is 0 or the pointer of an object retained once, by
/// `publishFirstObjects`, which sets it only from 0 (a compare-exchange: a second publisher
/// releases its own object); it never changes after that, and `releaseFirstObjects` releases the
/// object only from `deinit`, when no reader can hold the positions. A reader that sees the
/// pointer (acquiring, paired with the releasing exchange) sees the object fully made.
extension IndexPositions {
    /// Whether a read ahead published its objects.
    var hasFirstObjects: Bool {
        firstObjectsWord.load(ordering: .acquiring) != 0
    }

    /// The published object at `position`, or nil when none is published there. Read through a
    /// guaranteed reference, which the positions keep alive: a strong one cost a retain and a
    /// release of the objects and of their array per read, more than the lock it saves.
    func firstObject(at position: Int) -> StorageKey? {
        guard let pointer = UnsafeRawPointer(bitPattern: firstObjectsWord.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<FirstObjects>.fromOpaque(pointer)._withUnsafeGuaranteedRef { first in
            first.objects.indices.contains(position) ? first.objects[position] : nil
        }
    }

    /// Publishes `objects` unless objects are published already.
    func publishFirstObjects(_ objects: FirstObjects) {
        let retained = Unmanaged.passRetained(objects)
        let (exchanged, _) = firstObjectsWord.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), ordering: .acquiringAndReleasing)
        if !exchanged { retained.release() }
    }

    /// Releases the published objects: from `deinit` only.
    func releaseFirstObjects() {
        guard let pointer = UnsafeRawPointer(bitPattern: firstObjectsWord.load(ordering: .acquiring)) else { return }
        Unmanaged<FirstObjects>.fromOpaque(pointer).release()
    }
}
