/// One commit's changes to the secondary indexes, gathered over any number of batches (a
/// streamed transaction's pieces) and checked once at the end.
///
/// Without a spill, entries to add wait, per index, until an entry must leave that index (which
/// may be one of them) or the update finishes: added together, they are sorted and merged in one
/// pass, and a unique index is then checked once for the whole commit rather than once per
/// piece. With a `StreamIndexSpill` (a streamed commit), entries and the marks of those removed
/// are kept encoded, in the order they came (`PendingIndexEntries`), and written as a run of a
/// scratch file once an index holds its bound of them and when the update finishes, so a
/// streamed commit of any size holds about that many bytes per index and publishes none in
/// memory; a unique index that was empty and took one such run is checked as it is written.
/// A piece's values are needed only while its keys are read; the entries are what is kept.
///
/// ```swift
/// var update = IndexUpdate(secondary)
/// for batch in pieces { try update.add(batch, values: &groupValues, stored: readPublished) }
/// secondary = try update.finish()
/// ```
struct IndexUpdate {
    private var updated: SecondaryIndexes
    /// The indexes by position (`SecondaryIndexes.ordered`), and per indexed type its positions.
    private let definitions: [IndexDefinition]
    private let positionsByType: [String: [Int]]
    /// The last type looked up and its positions: a batch's operations come in runs of one type.
    private var lastType: String?
    private var lastPositions: [Int] = []
    /// Per index position, entries to add that have not been merged yet (without a spill).
    private var waiting: [[IndexEntry]]
    /// Per index position, with a spill: entries and marks not yet written to a run.
    private var pending: [PendingIndexEntries]
    /// Per index position, the entries added to a unique index and still in memory, to check
    /// at the end, and how many were added in all (those spilled included). Once they are many
    /// beside the index (`bulkChecked`), the whole index is read at the end instead and they
    /// are no longer kept.
    private var inserted: [[IndexEntry]]
    private var insertedCounts: [Int]
    private var bulkChecked: [Bool]
    /// Per index position, whether it was empty at the start (or emptied by a deletion of every
    /// object), the runs written of it since, and the first key the last run's live entries
    /// share: with one run and nothing in memory, that run is the index, checked as written.
    private var startedEmpty: [Bool]
    private var spillsSinceEmpty: [Int]
    private var lastDuplicate: [IndexKey?]
    /// Where entries past the bound go.
    private var spill: StreamIndexSpill?
    /// Whether entries may still go there: not once writing there failed.
    private var spills: Bool

    /// An update of `indexes`; with `spill`, one that keeps entries encoded and writes an
    /// index's to its scratch file once they reach its bound, and at the end.
    init(_ indexes: SecondaryIndexes, spill: StreamIndexSpill? = nil) {
        updated = indexes
        definitions = indexes.ordered
        positionsByType = indexes.positionsByType
        waiting = Array(repeating: [], count: definitions.count)
        pending = spill == nil ? [] : definitions.map { PendingIndexEntries(index: $0.name) }
        inserted = Array(repeating: [], count: definitions.count)
        insertedCounts = Array(repeating: 0, count: definitions.count)
        bulkChecked = Array(repeating: false, count: definitions.count)
        startedEmpty = definitions.map { definition in
            indexes.indexes[definition.name].map { $0.runs.isEmpty && !$0.hasChanges } ?? false
        }
        spillsSinceEmpty = Array(repeating: 0, count: definitions.count)
        lastDuplicate = Array(repeating: nil, count: definitions.count)
        self.spill = spill
        spills = spill != nil
    }

    /// Applies `operations`. The value an operation replaces is the one `values` holds for its
    /// key (an earlier operation of the commit, or of the group), else `stored`'s; each indexed
    /// operation is then recorded in `values`. `streamed`, when the operations were read from a
    /// streamed piece, is that piece's decoded operations, one for each: their puts are recorded
    /// by where their values lie in the log.
    mutating func add(
        _ operations: [WriteBatch.Operation], streamed: [DecodedOperation]? = nil, values: inout GroupValues,
        stored: (String, StorageKey) throws -> [UInt8]?
    ) throws {
        for (number, operation) in operations.enumerated() {
            switch operation {
            case .put(let type, let key, let value):
                let positions = positions(of: type)
                guard !positions.isEmpty else { continue }
                let old = try values.written(type: type, key: key) ?? stored(type, key)
                for position in positions {
                    let definition = definitions[position]
                    if let old { try remove(old, of: key, at: position) }
                    for indexKey in try SecondaryIndexes.keys(of: value, object: key, definition: definition) {
                        let entry = IndexEntry(key: indexKey, object: key)
                        if spills {
                            try pending[position].append(entry, isLive: true)
                        } else {
                            waiting[position].append(entry)
                        }
                        if definition.isUnique { noteInserted(entry, at: position) }
                    }
                }
                if let streamed, number < streamed.count, case .put(_, _, let offset, _) = streamed[number] {
                    values.recordStreamed(type: type, key: key, value: value, offset: offset)
                } else {
                    values.record(operation)
                }
            case .delete(let type, let key):
                let positions = positions(of: type)
                guard !positions.isEmpty else { continue }
                if let old = try values.written(type: type, key: key) ?? stored(type, key) {
                    for position in positions { try remove(old, of: key, at: position) }
                }
                values.record(operation)
            case .deleteAll(let type):
                for position in positions(of: type) {
                    waiting[position] = []
                    if spills { pending[position] = PendingIndexEntries(index: definitions[position].name) }
                    updated.indexes[definitions[position].name] = SecondaryIndex()
                    startedEmpty[position] = true
                    spillsSinceEmpty[position] = 0
                }
                values.record(operation)
            case .setSchema, .setMetadata, .reserveCapacity:
                break
            }
        }
        if spills { try spillDue() }
    }

    /// Keeps `entry`, added to the unique index at `position`, for the check at the end, until
    /// the entries added are many beside the index: then the whole index is read at the end.
    /// Once true that stays true, as each entry added later adds one to both.
    private mutating func noteInserted(_ entry: IndexEntry, at position: Int) {
        insertedCounts[position] += 1
        // Pending entries are read back from their runs at the end.
        guard !bulkChecked[position], !spills else { return }
        inserted[position].append(entry)
        // Looked at now and then: the count of the index is a lookup by name.
        let held = inserted[position].count
        guard held >= 1_024, held & (held - 1) == 0 else { return }
        let count = (updated.indexes[definitions[position].name]?.count ?? 0) + waiting[position].count
        if insertedCounts[position] * 8 > count {
            bulkChecked[position] = true
            inserted[position] = []
        }
    }

    /// Writes each index's pending entries that reach the spill's bound to its scratch file.
    private mutating func spillDue() throws {
        for position in definitions.indices where spills {
            guard let spill, spill.isDue(pending[position]) else { continue }
            spillPending(position)
        }
    }

    /// Writes the pending entries of the index at `position` as a run of the scratch file. A
    /// failure to write there (a full disk) keeps every index's pending entries in memory from
    /// then on, as a next run could overwrite what was written.
    private mutating func spillPending(_ position: Int) {
        let name = definitions[position].name
        guard !pending[position].isEmpty, let index = updated.indexes[name] else { return }
        do {
            guard var spill else { return }
            let (spilled, duplicate) = try spill.spill(pending[position], onto: index, checkingUnique: definitions[position].isUnique)
            self.spill = spill
            updated.indexes[name] = spilled
            pending[position] = PendingIndexEntries(index: name)
            spillsSinceEmpty[position] += 1
            lastDuplicate[position] = duplicate
        } catch {
            keepPendingInMemory()
        }
    }

    /// Applies every index's pending entries to it in memory, in the order they came, and
    /// stops spilling.
    private mutating func keepPendingInMemory() {
        spills = false
        for position in definitions.indices {
            let held = pending[position]
            pending[position] = PendingIndexEntries(index: definitions[position].name)
            // Decoding bytes this update encoded: a failure would be a bug; the entries then
            // stay out, and the checkpoint's count check reports the index.
            try? held.forEach { entry, isLive in
                if isLive {
                    waiting[position].append(entry)
                    if definitions[position].isUnique, !bulkChecked[position] { inserted[position].append(entry) }
                } else {
                    admitWaiting(position)
                    updated.indexes[definitions[position].name]?.remove(entry)
                }
            }
        }
    }

    /// The indexes with every change added, once the unique ones are checked.
    ///
    /// - Throws: `StorageError` when the commit gives two objects one key of a unique index. Of
    ///   several, whatever order the commit wrote them in, the index first by type name, then by
    ///   name, and its smallest such key: what every store reports (`StoreError.uniqueViolation`).
    consuming func finish() throws -> SecondaryIndexes {
        if spills {
            // Smallest first: the larger ones are then written with fewer of the others still held.
            for position in definitions.indices.sorted(by: { pending[$0].byteCount < pending[$1].byteCount }) where spills {
                spillPending(position)
            }
        }
        for position in definitions.indices { admitWaiting(position) }
        var clash: (definition: IndexDefinition, key: IndexKey)?
        for position in definitions.indices where insertedCounts[position] > 0 {
            let definition = definitions[position]
            if let clash, (clash.definition.typeName, clash.definition.name) < (definition.typeName, definition.name) { continue }
            guard let index = updated.indexes[definition.name], let key = try smallestClash(in: index, at: position) else { continue }
            clash = (definition, key)
        }
        if let clash { throw StorageError(.uniqueConstraint(index: clash.definition.name, value: clash.key.description)) }
        return updated
    }

    /// The smallest key the commit gave two objects in `index`, the unique index at `position`.
    private func smallestClash(in index: SecondaryIndex, at position: Int) throws -> IndexKey? {
        // The index is the one run written since it was empty: checked as it was written, in
        // order, so the first key its entries share is the smallest.
        if startedEmpty[position], spillsSinceEmpty[position] == 1, index.runs.count == 1, !index.hasChanges {
            return lastDuplicate[position]
        }
        // Many new entries: one pass over the whole index finds the first key two objects share.
        if bulkChecked[position] || index.takesInBulk(insertedCounts[position]) { return try index.firstDuplicate() }
        // An entry the commit later replaced or deleted is gone from the index: not a clash.
        var smallest: IndexKey?
        func note(_ entry: IndexEntry) throws {
            guard smallest.map({ entry.key < $0 }) ?? true, entry.key.isUniquelyConstrained, try index.holdsAnother(entry) else { return }
            smallest = entry.key
        }
        for entry in inserted[position] { try note(entry) }
        // The entries spilled, if any: those the scratch runs add, net of the commit's later
        // removals.
        try spill?.forEachAdded(in: index, note)
        return smallest
    }

    private mutating func positions(of type: String) -> [Int] {
        if type != lastType {
            lastType = type
            lastPositions = positionsByType[type] ?? []
        }
        return lastPositions
    }

    private mutating func admitWaiting(_ position: Int) {
        guard !waiting[position].isEmpty else { return }
        let entries = waiting[position]
        waiting[position] = []
        updated.indexes[definitions[position].name]?.insert(contentsOf: entries)
    }

    /// Takes the entries `old`, the value `key` held, gave the index at `position` out of it,
    /// after the entries waiting for it (one of them may be among those); with a spill, adds
    /// their marks to the pending entries, which cancel them wherever they lie.
    private mutating func remove(_ old: [UInt8], of key: StorageKey, at position: Int) throws {
        let definition = definitions[position]
        if spills {
            for indexKey in try SecondaryIndexes.keys(of: old, object: key, definition: definition) {
                try pending[position].append(IndexEntry(key: indexKey, object: key), isLive: false)
            }
            return
        }
        admitWaiting(position)
        for indexKey in try SecondaryIndexes.keys(of: old, object: key, definition: definition) {
            updated.indexes[definition.name]?.remove(IndexEntry(key: indexKey, object: key))
        }
    }
}
