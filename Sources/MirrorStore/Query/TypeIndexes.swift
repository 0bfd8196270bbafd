import MirrorStoreEngine

/// The secondary indexes of one type as one snapshot holds them, by property position: each found
/// at most once per query source, so that planning a query looks no index up by name.
///
/// A class: the planner reads it through its source several times per query, and a copy of its
/// layout, snapshot and slots was a retain and a release of each.
final class TypeIndexes: Sendable {
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

    /// Where each of a model's indexes serves, by property position: worked out once per model
    /// (``ModelRegistry/Entry/indexLayout``), so that each snapshot's indexes are only looked up
    /// by name and put in their slots, not sorted into place again.
    struct Layout: Sendable {
        /// The indexes the model asks for; a snapshot's indexes are kept in this order.
        let wanted: [WantedIndex]
        /// By property position: the place in `wanted` of the index of the property's values, or -1.
        let plain: [Int]
        /// By property position: the place in `wanted` of the index of the property's folded
        /// strings, or -1; empty for a model with no such index (the common case).
        let folded: [Int]
        /// The places in `wanted` of the compound indexes, in the order the model declares them.
        let compound: [Int]

        init(_ wanted: [WantedIndex], propertyCount: Int) {
            var plain = [Int](repeating: -1, count: propertyCount)
            var folded = wanted.contains { $0.isFolded } ? plain : []
            var compound: [Int] = []
            for (slot, index) in wanted.enumerated() {
                if index.isFolded, let position = index.positions.first, folded.indices.contains(position) {
                    folded[position] = slot
                } else if index.positions.count > 1 {
                    compound.append(slot)
                } else if let position = index.positions.first, plain.indices.contains(position) {
                    plain[position] = slot
                }
            }
            self.wanted = wanted
            self.plain = plain
            self.folded = folded
            self.compound = compound
        }
    }

    private let layout: Layout
    private let snapshot: EngineSnapshot
    /// The indexes of one property (or of its folded form) by their place in `layout.wanted`,
    /// each looked up on first use: a query mostly reads one of them, and looking up every one
    /// was most of what making a source cost after each commit.
    private let slots: [TypeIndexSlot]
    /// The compound indexes the snapshot holds, in the order the model declares them.
    let compound: [Compound]

    /// The indexes `layout` places, as `snapshot` holds them.
    init(_ layout: Layout, snapshot: EngineSnapshot) {
        var compound: [Compound] = []
        for slot in layout.compound {
            if let index = Self.index(layout.wanted[slot], in: snapshot) {
                compound.append(Compound(index: index, positions: layout.wanted[slot].positions))
            }
        }
        self.layout = layout
        self.snapshot = snapshot
        // One per wanted index; a compound index's stays unused (`compound` holds it). Made by
        // count: a map over `wanted` copied each wanted index.
        slots = (0..<layout.wanted.count).map { _ in TypeIndexSlot() }
        self.compound = compound
    }

    /// The index `wanted` names, as `snapshot` holds it.
    private static func index(_ wanted: borrowing WantedIndex, in snapshot: EngineSnapshot) -> Index? {
        guard let found = snapshot.index(named: wanted.name) else { return nil }
        return Index(name: wanted.name, snapshot: found, order: wanted.order)
    }

    /// The index on the folded form of the property at `position`, if it has one.
    func folded(_ position: Int) -> Index? {
        layout.folded.indices.contains(position) ? index(at: layout.folded[position]) : nil
    }

    /// The index on the property at `position`, if it has one.
    subscript(position: Int) -> Index? {
        layout.plain.indices.contains(position) ? index(at: layout.plain[position]) : nil
    }

    /// The index in place `slot` of `layout.wanted`, looked up on first use; nil for -1 (none).
    private func index(at slot: Int) -> Index? {
        guard slots.indices.contains(slot) else { return nil }
        let published = slots[slot].published
        if published.isKnown { return published.index }
        return slots[slot].publish { Self.index(layout.wanted[slot], in: snapshot) }
    }

    /// Whether the property at `position` is part of some compound index.
    func isCompoundComponent(_ position: Int) -> Bool {
        compound.contains { $0.positions.contains(position) }
    }
}
