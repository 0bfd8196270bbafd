import MirrorStoreEngine

/// Finds the objects of one type that satisfy query conditions as a write transaction sees
/// them: the snapshot it started from, overlaid with its pending writes.
///
/// The snapshot's indexes know nothing of the pending writes, so they only propose candidates
/// among the objects the transaction has not touched; every object it wrote is tested too.
struct TransactionMatches<Model: Persistable> {
    let source: QuerySource
    let pending: PendingWrites

    /// The keys of the matching objects, in primary-key order.
    func keys(satisfying conditions: [QueryCondition]) throws -> [StorageKey] {
        let typeName = source.plan.typeName
        let snapshot = source.snapshot
        let access = QueryPlanner(source: source).accessPath(for: conditions)
        let proposed: [StorageKey] = switch access.source {
        // A join, or a link's presence, reads the linked objects as committed: one the
        // transaction changed could make an untouched object match, so every object is a candidate.
        case .scan, .linked, .linkPresence: try snapshot.keys(type: typeName)
        case .primaryKeys(let keys): keys
        case .index(let range): try range.objects()
        }
        var candidates = try proposed.filter { try pending.isWritten(type: typeName, key: $0) == nil }
        candidates += try pending.writtenKeys(type: typeName)
        candidates.sort(by: StorageKey.precedes)
        let tester = try ConditionTester<Model>(source: source, conditions: conditions, pending: pending)
        let view = StoredView(snapshot: snapshot, pending: pending)
        var matches: [StorageKey] = []
        for key in candidates where matches.last != key {
            if let bytes = try view.value(type: typeName, key: key), try tester.matches(bytes, key: key) { matches.append(key) }
        }
        return matches
    }
}
