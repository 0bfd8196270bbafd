import MirrorStoreEngine

/// The secondary indexes of one type as one snapshot holds them, by property position: found once
/// per query source, so that planning a query looks no index up by name.
struct TypeIndexes: Sendable {
    /// A class: the planner copies the index it chooses several times per query, and a copy of
    /// a reference is one retain where a copy of the name, the snapshot and the order was four.
    final class Index: Sendable {
        let name: String
        let snapshot: IndexSnapshot
        /// For the index of one property (or of its folded form): the order its entries follow,
        /// by ``RecordSortKey/orderName``, as an access path gives it; made once per model
        /// (``WantedIndex/order``), shared by every store state's indexes.
        let order: [(name: String, kind: PropertyKind)]

        init(name: String, snapshot: IndexSnapshot, order: [(name: String, kind: PropertyKind)] = []) {
            self.name = name
            self.snapshot = snapshot
            self.order = order
        }

        // The snapshot's reads, made here for an ``IndexAccess``: read through it from there,
        // two references away, the snapshot was copied and released on each read.

        func objects(from lower: IndexBound?, to upper: IndexBound?) throws -> [StorageKey] {
            try snapshot.objects(from: lower, to: upper)
        }

        func objectKeySet(from lower: IndexBound?, to upper: IndexBound?, capacity: Int) throws -> ObjectKeySet {
            try snapshot.objectKeySet(from: lower, to: upper, capacity: capacity)
        }

        func forEachObject(from lower: IndexBound?, to upper: IndexBound?, _ body: (StorageKey) -> Bool) throws {
            try snapshot.forEachObject(from: lower, to: upper, body)
        }

        func forEach(from lower: IndexBound?, to upper: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
            try snapshot.forEach(from: lower, to: upper, body)
        }

        func count(from lower: IndexBound?, to upper: IndexBound?) throws -> Int {
            try snapshot.count(from: lower, to: upper)
        }

        var isUnique: Bool { snapshot.isUnique }
    }

    /// A compound index: its keys are tuples of the keys of the properties at `positions`.
    struct Compound: Sendable {
        let index: Index
        let positions: [Int]
    }

    private let byPosition: [Index?]
    /// The indexes of folded strings, by property position.
    private let foldedByPosition: [Index?]
    /// The compound indexes, in the order the model declares them.
    let compound: [Compound]

    /// The indexes in `wanted`, as `snapshot` holds them.
    init(_ wanted: [WantedIndex], schema: ObjectSchema, snapshot: EngineSnapshot) {
        var byPosition = [Index?](repeating: nil, count: schema.properties.count)
        // Made only for a type that has an index of folded strings (`folded(_:)` checks the positions).
        var foldedByPosition = wanted.contains { $0.isFolded } ? byPosition : []
        var compound: [Compound] = []
        for wanted in wanted {
            guard let snapshot = snapshot.index(named: wanted.name) else { continue }
            if wanted.isFolded, let position = wanted.positions.first, foldedByPosition.indices.contains(position) {
                foldedByPosition[position] = Index(name: wanted.name, snapshot: snapshot, order: wanted.order)
            } else if wanted.positions.count > 1 {
                compound.append(Compound(index: Index(name: wanted.name, snapshot: snapshot), positions: wanted.positions))
            } else if let position = wanted.positions.first, byPosition.indices.contains(position) {
                byPosition[position] = Index(name: wanted.name, snapshot: snapshot, order: wanted.order)
            }
        }
        self.byPosition = byPosition
        self.foldedByPosition = foldedByPosition
        self.compound = compound
    }

    /// The index on the folded form of the property at `position`, if it has one.
    func folded(_ position: Int) -> Index? {
        foldedByPosition.indices.contains(position) ? foldedByPosition[position] : nil
    }

    /// Whether the property at `position` is part of some compound index.
    func isCompoundComponent(_ position: Int) -> Bool {
        compound.contains { $0.positions.contains(position) }
    }

    /// The index on the property at `position`, if it has one.
    subscript(position: Int) -> Index? {
        byPosition.indices.contains(position) ? byPosition[position] : nil
    }
}
