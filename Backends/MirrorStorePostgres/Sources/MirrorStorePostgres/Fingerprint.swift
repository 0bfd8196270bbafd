import MirrorStore

/// Every stored value of a record and of the records it reaches (linked and embedded models),
/// compared by value: what an observer compares to tell whether an object changed. Links are
/// followed once per record, so cycles end.
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

    /// The fingerprint of `record`, or only of its properties at `watching` (and of everything
    /// they reach) when given.
    init(_ record: ManagedObject, watching: Set<Int>? = nil) {
        var visited: Set<ObjectIdentifier> = [ObjectIdentifier(record)]
        let positions = record.objectSchema.properties.indices.filter { watching?.contains($0) ?? true }
        self = .record(positions.map { Self.walk(record[propertyAt: $0], visited: &visited) })
    }

    private static func walk(_ record: ManagedObject, visited: inout Set<ObjectIdentifier>) -> Fingerprint {
        guard visited.insert(ObjectIdentifier(record)).inserted else { return .seen }
        return .record(record.objectSchema.properties.indices.map { walk(record[propertyAt: $0], visited: &visited) })
    }

    private static func walk(_ value: RecordValue, visited: inout Set<ObjectIdentifier>) -> Fingerprint {
        switch value {
        case .object(let record): walk(record, visited: &visited)
        case .list(let elements): .list(elements.map { walk($0, visited: &visited) })
        case .dictionary(let entries): .dictionary(entries.mapValues { walk($0, visited: &visited) })
        default: .value(value)
        }
    }
}
