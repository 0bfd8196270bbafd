/// One commit's changes to the secondary indexes, gathered over any number of batches (a
/// streamed transaction's pieces) and checked once at the end.
///
/// Entries to add wait, per index, until an entry must leave that index (which may be one of
/// them) or the update finishes: added together, they are sorted and merged in one pass, and a
/// unique index is then checked once for the whole commit rather than once per piece. A
/// piece's values are needed only while its keys are read; the entries are what is kept. With a
/// `StreamIndexSpill`, an index whose entries in memory reach its bound writes them as a run of
/// a scratch file, so a streamed commit of any size holds about that many per index.
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
    /// Per index position, entries to add that have not been merged yet.
    private var waiting: [[IndexEntry]]
    /// Per index position, the entries added to a unique index and still in memory, to check
    /// at the end, and how many were added in all (those spilled included).
    private var inserted: [[IndexEntry]]
    private var insertedCounts: [Int]
    /// Where entries past the bound go.
    private var spill: StreamIndexSpill?
    /// Whether entries may still go there: not once writing there failed.
    private var spills: Bool

    /// An update of `indexes`; with `spill`, one that writes an index's entries in memory to its
    /// scratch file once they reach its bound.
    init(_ indexes: SecondaryIndexes, spill: StreamIndexSpill? = nil) {
        updated = indexes
        definitions = indexes.ordered
        positionsByType = indexes.positionsByType
        waiting = Array(repeating: [], count: definitions.count)
        inserted = Array(repeating: [], count: definitions.count)
        insertedCounts = Array(repeating: 0, count: definitions.count)
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
                        waiting[position].append(entry)
                        if definition.isUnique {
                            inserted[position].append(entry)
                            insertedCounts[position] += 1
                        }
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
                    updated.indexes[definitions[position].name] = SecondaryIndex()
                }
                values.record(operation)
            case .setSchema, .setMetadata, .reserveCapacity:
                break
            }
        }
        if spills { try spillDue() }
    }

    /// Writes the entries in memory of each index that holds its spill's bound of them to the
    /// spill's scratch file. A failure to write there (a full disk) keeps them in memory from
    /// then on, as a next run could overwrite what was written.
    private mutating func spillDue() throws {
        for position in definitions.indices {
            let name = definitions[position].name
            guard let spill, let index = updated.indexes[name], spill.isDue(index, waiting: waiting[position].count) else { continue }
            admitWaiting(position)
            guard let admitted = updated.indexes[name] else { continue }
            do {
                updated.indexes[name] = try self.spill?.spill(admitted)
            } catch {
                spills = false
                return
            }
            // Those entries are read back from the runs at the end.
            inserted[position] = []
        }
    }

    /// The indexes with every change added, once the unique ones are checked.
    ///
    /// - Throws: `StorageError` when the commit gives two objects one key of a unique index. Of
    ///   several, whatever order the commit wrote them in, the index first by type name, then by
    ///   name, and its smallest such key: what every store reports (`StoreError.uniqueViolation`).
    consuming func finish() throws -> SecondaryIndexes {
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
        // Many new entries: one pass over the whole index finds the first key two objects share.
        if index.takesInBulk(insertedCounts[position]) { return try index.firstDuplicate() }
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
    /// after the entries waiting for it (one of them may be among those).
    private mutating func remove(_ old: [UInt8], of key: StorageKey, at position: Int) throws {
        admitWaiting(position)
        let definition = definitions[position]
        for indexKey in try SecondaryIndexes.keys(of: old, object: key, definition: definition) {
            updated.indexes[definition.name]?.remove(IndexEntry(key: indexKey, object: key))
        }
    }
}
