/// A walk of an index in the order of its positions (`IndexPositions`: index order, or its
/// groups of equal keys in reverse, each group still in object-key order) that keeps the
/// objects a set holds (``ObjectKeySet``), read a batch of entries at a time: the first results
/// of a filter sorted by another index, found without a record read. Each entry's object is
/// looked up in the set by the bytes the index stores for it, where they lie in a run read alone,
/// and only the objects kept become a `StorageKey`; a run with the changes since it was written
/// in memory is read the same way, the changes merged in as it goes (deletes win), so that a
/// commit of a few objects leaves the walk reading the run in place; any other index (several
/// runs) is read entry by entry as `IndexSnapshot.forEach` reads it and each entry looked up in
/// the same set (the route the others are tested against).
///
/// ```swift
/// var walk = sortIndex.memberWalk(ascending: false, members: try category.objectKeySet(from: bound, to: bound))
/// let first = try walk.next(reading: 200)
/// ```
public struct IndexMemberWalk: Sendable {
    private let index: SecondaryIndex
    private let members: ObjectKeySet
    /// Whether the walk follows the index order, or its groups of equal keys in reverse.
    public let ascending: Bool
    /// Whether entries are read decoded, as any index is read, even from a run read alone.
    private let decodes: Bool
    /// The key of the last group read, after which the next read goes on.
    private var last: IndexKey?
    /// How many entries were read.
    public private(set) var walked = 0
    /// Whether every entry was read.
    public private(set) var isComplete: Bool

    init(_ index: SecondaryIndex, ascending: Bool, members: ObjectKeySet, decodes: Bool) {
        self.index = index
        self.members = members
        self.ascending = ascending
        self.decodes = decodes
        isComplete = index.count == 0
    }

    /// Reads on at least `entries` more entries (and to the end of the group of equal keys
    /// reached) and returns the objects among them that the set holds, in position order. A
    /// read that fails leaves the walk as it was.
    public mutating func next(reading entries: Int) throws -> [StorageKey] {
        guard !isComplete else { return [] }
        var collector = Collector(members: members, ascending: ascending, wanted: Swift.max(entries, 1))
        let bound = last.map { IndexBound($0, inclusive: false) }
        let below = ascending ? bound.map(KeysBelow.init(before:)) ?? .noEntry : .noEntry
        let notAbove = ascending ? .everyEntry : bound.map(KeysBelow.init(through:)) ?? .everyEntry
        if !decodes, let run = index.soleRun {
            if ascending {
                try run.forEachStoredEntry(after: below, through: notAbove) { collector.take($0, $1) }
            } else {
                try run.forEachStoredEntryReversed(through: notAbove, after: below) { collector.take($0, $1) }
            }
        } else if !decodes, let run = index.unmarkedSoleRun {
            try index.forEachStoredEntryOverRun(run, forward: ascending, below, notAbove) { collector.take($0, $1) }
        } else {
            let take = { (entry: consuming IndexEntry) -> Bool in
                let (key, object) = (entry.key, entry.object)
                return StoredIndexKey.with(key) { key in StoredObjectKey.with(object) { collector.take(key, $0) } } ?? false
            }
            if ascending {
                try index.forEach(from: bound, to: nil, take)
            } else {
                try index.forEachReversed(from: bound, to: nil, take)
            }
        }
        if let failure = collector.failure { throw damage(failure) }
        if collector.reachedEnd, !collector.group.isEmpty { collector.closeGroup() }
        if collector.hasGroup {
            guard let key = collector.groupKey else { throw damage("an index key is not UTF-8") }
            last = key
        }
        walked += collector.read
        isComplete = collector.reachedEnd
        return collector.found
    }

    private func damage(_ reason: String) -> StorageError {
        StorageError(.corrupted(path: index.runs.first?.log.path ?? "", offset: 0, reason: reason))
    }

    /// Entries being read, a group of equal keys at a time.
    private struct Collector {
        let members: ObjectKeySet
        let ascending: Bool
        let wanted: Int
        /// The objects kept, in position order, those of the group being read excepted.
        var found: [StorageKey] = []
        /// The objects kept of the group being read backward, in the order read.
        var group: [StorageKey] = []
        /// Entries read, those of the group being read included.
        var read = 0
        var reachedEnd = true
        /// Why the read stopped short, if it did.
        var failure: String?
        /// The group's key, as stored: its tag, its number, its bytes.
        var hasGroup = false
        var groupTag = IndexKeyTag.null
        var groupFixed: UInt64 = 0
        var groupBody: [UInt8] = []

        init(members: ObjectKeySet, ascending: Bool, wanted: Int) {
            self.members = members
            self.ascending = ascending
            self.wanted = wanted
        }

        mutating func take(_ key: StoredIndexKey, _ object: StoredObjectKey) -> Bool {
            if !hasGroup || !isGroupKey(key) {
                if hasGroup {
                    if !group.isEmpty { closeGroup() }
                    if read >= wanted {
                        reachedEnd = false
                        return false
                    }
                }
                hasGroup = true
                groupTag = key.tag
                groupFixed = key.fixed
                if !key.body.isEmpty || !groupBody.isEmpty {
                    groupBody.removeAll(keepingCapacity: true)
                    groupBody.append(contentsOf: key.body)
                }
            }
            read += 1
            guard let isMember = members.contains(object) else {
                failure = "an object's key in an index entry is not UTF-8"
                return false
            }
            guard isMember else { return true }
            guard let kept = object.storageKey else {
                failure = "an object's key in an index entry is not UTF-8"
                return false
            }
            // Read forward, a group comes in object-key order already.
            if ascending { found.append(kept) } else { group.append(kept) }
            return true
        }

        /// Whether `key` equals the group's, as `IndexKey`'s `==` has it: the same kind, and the
        /// same bytes, or (a double) the same number or both NaN.
        private func isGroupKey(_ key: StoredIndexKey) -> Bool {
            guard key.tag == groupTag else { return false }
            switch key.tag {
            case .null, .falseValue, .trueValue:
                return true
            case .integer, .unsigned:
                return key.fixed == groupFixed
            case .double:
                let (a, b) = (Double(bitPattern: key.fixed), Double(bitPattern: groupFixed))
                return a == b || (a.isNaN && b.isNaN)
            case .string, .bytes, .tuple:
                return key.body.elementsEqual(groupBody)
            }
        }

        /// The group read whole: read backward, it came last object first, and is turned to
        /// object-key order.
        mutating func closeGroup() {
            if group.count == 1 { found.append(group[0]) } else { found.append(contentsOf: group.reversed()) }
            group.removeAll(keepingCapacity: true)
        }

        /// The key of the last group read, decoded; nil when it does not decode.
        var groupKey: IndexKey? {
            groupBody.withUnsafeBytes { StoredIndexKey(tag: groupTag, fixed: groupFixed, body: $0).indexKey }
        }
    }
}

extension IndexSnapshot {
    /// The set of the objects with an entry between the bounds, held as bytes: for testing many
    /// objects for membership of a range (``IndexMemberWalk``). A run read alone, or with the
    /// changes since it was written merged in, is read without decoding its entries (those
    /// before the last change excepted).
    /// `capacity`: the entries expected, if known.
    public func objectKeySet(from lower: IndexBound?, to upper: IndexBound?, capacity: Int = 0) throws -> ObjectKeySet {
        try objectKeySet(from: lower, to: upper, capacity: capacity, decoding: false)
    }

    /// ``objectKeySet(from:to:)``, reading the entries decoded (`decoding`) whatever the index
    /// holds: the route the other is tested against.
    func objectKeySet(from lower: IndexBound?, to upper: IndexBound?, capacity: Int = 0, decoding: Bool) throws -> ObjectKeySet {
        var set = ObjectKeySet(capacity: capacity)
        if !decoding, let run = storage.unmarkedSoleRun {
            var failed = false
            let (below, notAbove) = (lower.map(KeysBelow.init(before:)) ?? .noEntry, upper.map(KeysBelow.init(through:)) ?? .everyEntry)
            let insert = { (_: StoredIndexKey, object: StoredObjectKey) -> Bool in
                guard set.insert(object) != nil else {
                    failed = true
                    return false
                }
                return true
            }
            if storage.hasChanges {
                try storage.forEachStoredEntryOverRun(run, forward: true, below, notAbove, insert)
            } else {
                try run.forEachStoredEntry(after: below, through: notAbove, insert)
            }
            if failed { throw StorageError(.corrupted(path: run.log.path, offset: 0, reason: "an object's key in an index entry is not UTF-8")) }
            return set
        }
        try storage.forEachObject(from: lower, to: upper) { object in
            set.insert(object)
            return true
        }
        return set
    }

    /// A walk of the index's positions (see ``positions(ascending:)``) that keeps the objects
    /// `members` holds.
    public func memberWalk(ascending: Bool, members: ObjectKeySet) -> IndexMemberWalk {
        IndexMemberWalk(storage, ascending: ascending, members: members, decodes: false)
    }

    /// ``memberWalk(ascending:members:)`` reading every entry decoded, as any index is read: the
    /// route the other is tested against.
    func decodingMemberWalk(ascending: Bool, members: ObjectKeySet) -> IndexMemberWalk {
        IndexMemberWalk(storage, ascending: ascending, members: members, decodes: true)
    }
}
