extension IndexRun {
    /// ``forEachEntry(after:through:_:)`` with each entry lent as the block stores it, decoding
    /// nothing: for a reader that decodes only the entries it keeps (``IndexMemberWalk``,
    /// ``ObjectKeySet``). Each key is compared with the upper bound where it lies.
    func forEachStoredEntry(after below: KeysBelow, through notAbove: KeysBelow, _ body: (StoredIndexKey, StoredObjectKey) -> Bool) throws {
        var block = below.isNoEntry ? 0 : max(0, blocksBelow(below) - 1)
        guard block < fences.count else { return }
        var searches = !below.isNoEntry
        while block < fences.count {
            // Constants in the closure: a variable it changes is checked for exclusive access at
            // each use.
            let (visited, search) = (block, searches)
            // A block before one that starts inside the bound lies inside it whole.
            let inside = notAbove.isEveryEntry || (visited + 1 < fences.count && notAbove.contains(fences[visited + 1]))
            let goesOn = try blocks.withBlock(visited) { reader -> Bool in
                guard reader.count == count(inBlock: visited) else { throw blocks.undecodable(visited) }
                var position = 0
                if search {
                    guard let found = reader.indexEntriesBelow(below) else { throw blocks.undecodable(visited) }
                    position = found
                }
                while position < reader.count {
                    if !inside {
                        guard let order = reader.indexKeyOrder(position, against: notAbove.key) else { throw blocks.undecodable(visited) }
                        guard notAbove.contains(order: order) else { return false }
                    }
                    guard let goesOn = reader.withIndexEntryBytes(position, { key, object, isLive in isLive ? body(key, object) : nil }),
                          let goesOn else { throw blocks.undecodable(visited) }
                    guard goesOn else { return false }
                    position += 1
                }
                return true
            }
            guard goesOn else { return }
            block += 1
            searches = false
            blocks.prefetch(forPassAt: block)
        }
    }

    /// ``forEachStoredEntry(after:through:_:)`` backward: each entry inside `notAbove` and past
    /// `below`, from the last down.
    func forEachStoredEntryReversed(through notAbove: KeysBelow, after below: KeysBelow, _ body: (StoredIndexKey, StoredObjectKey) -> Bool) throws {
        var block = notAbove.isEveryEntry ? fences.count - 1 : blocksBelow(notAbove) - 1
        guard block >= 0 else { return }
        var searches = !notAbove.isEveryEntry
        var start = count(inBlock: block) - 1
        while block >= 0 {
            let (visited, search, last) = (block, searches, start)
            // A block that starts past the bound lies past it whole.
            let past = below.isNoEntry || !below.contains(fences[visited])
            let goesOn = try blocks.withBlock(visited) { reader -> Bool in
                guard reader.count == count(inBlock: visited) else { throw blocks.undecodable(visited) }
                var position = last
                if search {
                    guard let found = reader.indexEntriesBelow(notAbove) else { throw blocks.undecodable(visited) }
                    position = found - 1
                }
                while position >= 0 {
                    if !past {
                        guard let order = reader.indexKeyOrder(position, against: below.key) else { throw blocks.undecodable(visited) }
                        guard !below.contains(order: order) else { return false }
                    }
                    guard let goesOn = reader.withIndexEntryBytes(position, { key, object, isLive in isLive ? body(key, object) : nil }),
                          let goesOn else { throw blocks.undecodable(visited) }
                    guard goesOn else { return false }
                    position -= 1
                }
                return true
            }
            guard goesOn else { return }
            block -= 1
            guard block >= 0 else { return }
            searches = false
            start = count(inBlock: block) - 1
        }
    }
}
