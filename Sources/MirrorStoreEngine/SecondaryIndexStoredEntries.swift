extension SecondaryIndex {
    /// `forEachOverRun` (`forward`) or `forEachReversedOverRun` with each entry lent as stored
    /// (``IndexRun/forEachStoredEntry(after:through:_:)``): a run without marks and the entries
    /// added and removed since, for a reader that decodes only the entries it keeps
    /// (``IndexMemberWalk``, ``ObjectKeySet``). While an entry in memory is still ahead, each
    /// run entry is decoded to be ordered against it, and one removed is left out (deletes win);
    /// past the last, the run's entries go to `body` undecoded, as from a run read alone. An
    /// entry in memory is lent in its stored form.
    func forEachStoredEntryOverRun(
        _ run: IndexRun, forward: Bool, _ below: KeysBelow, _ notAbove: KeysBelow, _ body: (StoredIndexKey, StoredObjectKey) -> Bool
    ) throws {
        var added = forward ? IndexCursor(memory: self.added, weight: 1, after: below) : IndexCursor(memory: self.added, weight: 1, through: notAbove)
        var removed = forward ? IndexCursor(memory: self.removed, weight: -1, after: below) : IndexCursor(memory: self.removed, weight: -1, through: notAbove)
        var stopped = false
        var undecodable = false
        // Whether `lhs` comes before `rhs` in the walk's direction.
        func before(_ lhs: IndexEntry, _ rhs: IndexEntry) -> Bool {
            forward ? IndexEntry.precedes(lhs, rhs) : IndexEntry.precedes(rhs, lhs)
        }
        func lend(_ entry: IndexEntry) -> Bool {
            StoredIndexKey.with(entry.key) { key in StoredObjectKey.with(entry.object) { body(key, $0) } } ?? true
        }
        func visit(_ key: StoredIndexKey, _ object: StoredObjectKey) -> Bool {
            if added.current != nil || removed.current != nil {
                guard let decodedKey = key.indexKey, let decodedObject = object.storageKey else {
                    undecodable = true
                    return false
                }
                let entry = IndexEntry(key: decodedKey, object: decodedObject)
                while let pending = added.current?.entry, before(pending, entry) {
                    added.advanceInMemory()
                    guard lend(pending) else {
                        stopped = true
                        return false
                    }
                }
                while let gone = removed.current?.entry, before(gone, entry) { removed.advanceInMemory() }
                if let gone = removed.current?.entry, gone == entry {
                    removed.advanceInMemory()
                    return true
                }
            }
            guard body(key, object) else {
                stopped = true
                return false
            }
            return true
        }
        if forward {
            try run.forEachStoredEntry(after: below, through: notAbove, visit)
        } else {
            try run.forEachStoredEntryReversed(through: notAbove, after: below, visit)
        }
        if undecodable { throw StorageError(.corrupted(path: run.log.path, offset: 0, reason: "an index entry's key is not UTF-8")) }
        guard !stopped else { return }
        // Past the run's last entry inside the bounds: the added entries still inside them.
        while let pending = added.current?.entry, forward ? notAbove.contains(pending) : !below.contains(pending) {
            added.advanceInMemory()
            guard lend(pending) else { return }
        }
    }
}
