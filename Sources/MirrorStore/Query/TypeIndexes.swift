import MirrorStoreEngine

/// The secondary indexes of one type as one snapshot holds them, by property position: found once
/// per query source, so that planning a query looks no index up by name.
struct TypeIndexes: Sendable {
    struct Index: Sendable {
        let name: String
        let snapshot: IndexSnapshot
    }

    private let byPosition: [Index?]

    /// The indexes in `wanted`, as `snapshot` holds them.
    init(_ wanted: [WantedIndex], schema: ObjectSchema, snapshot: EngineSnapshot) {
        var byPosition = [Index?](repeating: nil, count: schema.properties.count)
        for index in wanted where byPosition.indices.contains(index.position) {
            byPosition[index.position] = snapshot.index(named: index.name).map { Index(name: index.name, snapshot: $0) }
        }
        self.byPosition = byPosition
    }

    /// The index on the property at `position`, if it has one.
    subscript(position: Int) -> Index? {
        byPosition.indices.contains(position) ? byPosition[position] : nil
    }
}
