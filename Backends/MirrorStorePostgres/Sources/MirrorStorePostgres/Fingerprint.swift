import MirrorStore

/// Every stored value of a record and of the records it reaches (linked and embedded models, and
/// the records its inverses list), compared by value: what an observer compares to tell whether
/// an object changed. Links are followed once per record, so cycles end.
///
/// A value that is not equal to itself (a `Double` NaN) makes the object count as changed on
/// every read: an extra element at worst, never a missed change.
indirect enum Fingerprint: Equatable {
    case value(RecordValue)
    case record([Fingerprint])
    case list([Fingerprint])
    case dictionary([String: Fingerprint])
    /// A record already reached on the way here.
    case seen

    /// The fingerprint of `record`, or only of the values its `watching` paths read when given
    /// (links among them by their keys, see ``reference(_:)``); `inverses` gives the records
    /// each inverse of a record lists, which count too when every property does.
    init(_ record: ManagedObject, watching: WatchedPaths? = nil, inverses: (ManagedObject) -> [[ManagedObject]] = { _ in [] }) {
        var visited: Set<ObjectIdentifier> = [ObjectIdentifier(record)]
        guard let watching else {
            let parts = record.objectSchema.properties.indices.map { Self.walk(record[propertyAt: $0], visited: &visited, inverses: inverses) }
            self = .record(parts + Self.walkInverses(of: record, visited: &visited, inverses: inverses))
            return
        }
        self = .record(watching.values(in: record).map(Self.reference))
    }

    /// A watched value as the file store's observation compares it: a linked model by its key,
    /// the stored reference, not by what it holds (nor by the models it reaches); an embedded
    /// model by its values, its own links by their keys.
    private static func reference(_ value: RecordValue) -> Fingerprint {
        switch value {
        case .object(let record):
            if let key = record.objectSchema.primaryKey { return .value(record[key] ?? .null) }
            return .record(record.objectSchema.properties.indices.map { reference(record[propertyAt: $0]) })
        case .list(let elements): return .list(elements.map(reference))
        case .dictionary(let entries): return .dictionary(entries.mapValues(reference))
        default: return .value(value)
        }
    }

    private static func walk(
        _ record: ManagedObject, visited: inout Set<ObjectIdentifier>, inverses: (ManagedObject) -> [[ManagedObject]]
    ) -> Fingerprint {
        guard visited.insert(ObjectIdentifier(record)).inserted else { return .seen }
        let values = record.objectSchema.properties.indices.map { walk(record[propertyAt: $0], visited: &visited, inverses: inverses) }
        return .record(values + walkInverses(of: record, visited: &visited, inverses: inverses))
    }

    private static func walkInverses(
        of record: ManagedObject, visited: inout Set<ObjectIdentifier>, inverses: (ManagedObject) -> [[ManagedObject]]
    ) -> [Fingerprint] {
        inverses(record).map { sources in .list(sources.map { walk($0, visited: &visited, inverses: inverses) }) }
    }

    private static func walk(
        _ value: RecordValue, visited: inout Set<ObjectIdentifier>, inverses: (ManagedObject) -> [[ManagedObject]]
    ) -> Fingerprint {
        switch value {
        case .object(let record): walk(record, visited: &visited, inverses: inverses)
        case .list(let elements): .list(elements.map { walk($0, visited: &visited, inverses: inverses) })
        case .dictionary(let entries): .dictionary(entries.mapValues { walk($0, visited: &visited, inverses: inverses) })
        default: .value(value)
        }
    }
}
