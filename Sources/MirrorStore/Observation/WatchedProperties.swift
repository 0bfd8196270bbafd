import Foundation
import MirrorStoreEngine

/// The stored properties an observation watches (``Results/changes(keyPaths:)``): each a path from
/// the observed type through to-one links and embedded models, read from each result's record
/// and the records it links to, as a predicate reads them.
struct WatchedProperties: Sendable {
    /// The path of each key path, read from the record bound to its variable.
    private let paths: [(QueryNode, PredicateExpressions.VariableID)]

    /// - Throws: ``QueryError`` naming a key path that does not name a stored property, or one
    ///   going on from a property that is not a to-one link or an embedded model.
    init<Model: Persistable>(_ keyPaths: [PartialKeyPath<Model>], of source: QuerySource) throws {
        let root = PredicateExpressions.Variable<Model>().key
        var paths: [(QueryNode, PredicateExpressions.VariableID)] = []
        for keyPath in keyPaths {
            guard let text = KeyPathNames.dottedPath(of: keyPath, rootType: Model.self) else {
                throw QueryError(.unknownProperty(
                    typeName: source.plan.typeName, property: KeyPathNames.errorName(of: keyPath, rootType: Model.self)))
            }
            let path = try PropertyPath(text, in: source.schema, schemas: source.registry, root: root)
            paths.append((path.node, root))
        }
        self.paths = paths
    }

    /// A hash of the watched values of each of `keys` in `source`'s snapshot, linked records
    /// read once per call.
    ///
    /// A link whose target is gone hashes as `nil`, as the app reads it (in an array of links
    /// too, where `[T]` leaves it out): deleting the target of a watched link is a modification,
    /// as on PostgreSQL, whose foreign keys set such a link to `NULL`. Only values holding links
    /// look their targets up, each target once per call.
    func fingerprints(of keys: [StorageKey], in source: QuerySource) throws -> [Int] {
        let reader = RecordConditions(schema: source.schema, conditions: paths, snapshot: source.snapshot, schemas: source.registry)
        var stored: [String: [StorageKey: Bool]] = [:]
        func exists(_ typeName: String, _ key: StorageKey) throws -> Bool {
            if let known = stored[typeName]?[key] { return known }
            let found = try source.snapshot.contains(type: typeName, key: key)
            stored[typeName, default: [:]][key] = found
            return found
        }
        return try keys.map { key in
            let bytes = try source.listedBytes(of: key)
            let record = try reader.record(bytes, key: key)
            var hasher = Hasher()
            for index in paths.indices {
                if let value = try reader.value(index, for: record, key: key) {
                    hasher.combine(1 as UInt8)
                    try value.fingerprint(into: &hasher, linkExists: exists)
                } else {
                    // A link on the way is nil or dangling: the path reads nil.
                    hasher.combine(0 as UInt8)
                }
            }
            return hasher.finalize()
        }
    }
}

extension QueryValue {
    /// Feeds the value to `hasher`: equal stored values hash alike, and values a model tells
    /// apart almost always differ; a link `linkExists` denies hashes as `.null`.
    func fingerprint(into hasher: inout Hasher, linkExists: (String, StorageKey) throws -> Bool) throws {
        var pending = [self]
        while let value = pending.popLast() {
            switch value {
            case .null: hasher.combine(0 as UInt8)
            case .bool(let value): hasher.combine(value)
            case .int(let value): hasher.combine(value)
            case .uint(let value): hasher.combine(value)
            case .float(let value): hasher.combine(value.bitPattern)
            case .double(let value): hasher.combine(value.bitPattern)
            case .string(let value): hasher.combine(Array(value.utf8))
            case .data(let value): hasher.combine(value)
            case .date(let value): hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
            case .uuid(let value): hasher.combine(value)
            case .decimal(let value): hasher.combine(value.description)
            case .url(let value): hasher.combine(value)
            case .link(let typeName, let key):
                guard try linkExists(typeName, key) else {
                    hasher.combine(0 as UInt8)
                    continue
                }
                hasher.combine(typeName)
                hasher.combine(key)
            case .embedded(let schema, let values):
                hasher.combine(schema.typeName)
                hasher.combine(values.count)
                pending.append(contentsOf: values.reversed())
            case .list(let values):
                hasher.combine(values.count)
                pending.append(contentsOf: values.reversed())
            case .dictionary(let entries):
                hasher.combine(entries.count)
                for key in entries.keys.sorted().reversed() {
                    hasher.combine(key)
                    if let value = entries[key] { pending.append(value) }
                }
            }
        }
    }
}
