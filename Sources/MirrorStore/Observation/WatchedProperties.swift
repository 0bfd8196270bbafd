import Foundation
import MirrorStoreEngine

/// The stored properties an observation watches (``Results/changes(keyPaths:)``): each a path from
/// the observed type through to-one links and embedded models, read from each result's record
/// and the records it links to, as a predicate reads them.
struct WatchedProperties: Sendable {
    /// The path of each key path, read from the record bound to `root`.
    private let paths: [QueryNode]
    private let root: PredicateExpressions.VariableID
    /// The observed type's properties the paths start with.
    private let properties: Set<String>

    /// - Throws: ``QueryError`` naming a key path that does not name a stored property, or one
    ///   going on from a property that is not a to-one link or an embedded model.
    init<Model: Persistable>(_ keyPaths: [PartialKeyPath<Model>], of source: QuerySource) throws {
        let root = PredicateExpressions.Variable<Model>().key
        var paths: [QueryNode] = []
        var properties = Set<String>()
        for keyPath in keyPaths {
            guard let text = Self.dottedPath(of: keyPath, rootType: Model.self) else {
                throw QueryError(.unknownProperty(
                    typeName: source.plan.typeName, property: KeyPathNames.errorName(of: keyPath, rootType: Model.self)))
            }
            let path = try PropertyPath(text, in: source.schema, schemas: source.registry, root: root)
            paths.append(path.node)
            properties.formUnion(path.node.properties(readFrom: root))
        }
        self.paths = paths
        self.root = root
        self.properties = properties
    }

    /// `\Hero.publisher?.name` as `publisher.name`: the key path's components, optional chaining
    /// and force-unwrapping dropped (a `nil` link reads `nil` either way); `nil` for a key path
    /// that is not a chain of property names (a subscript, say).
    static func dottedPath(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        let prefix = "\\" + String(describing: rootType) + "."
        let text = keyPath.debugDescription
        guard text.hasPrefix(prefix) else { return nil }
        let path = text.dropFirst(prefix.count).filter { $0 != "?" && $0 != "!" }
        let names = path.split(separator: ".", omittingEmptySubsequences: false)
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
            return nil
        }
        return String(path)
    }

    /// A hash of the watched values of each of `keys` in `source`'s snapshot, linked records
    /// read once per call.
    func fingerprints(of keys: [StorageKey], in source: QuerySource) throws -> [Int] {
        let projection = RecordProjection(schema: source.schema, properties: properties, schemas: source.registry)
        let linked = LinkedRecords(snapshot: source.snapshot, schemas: source.registry)
        let evaluator = ConditionEvaluator(resolve: linked.record(type:key:))
        return try keys.map { key in
            guard let bytes = try source.storedBytes(of: key) else { throw source.missing(key) }
            let record: QueryValue
            do throws(RecordCodingFailure) {
                record = .embedded(source.schema, try projection.values(of: bytes))
            } catch {
                throw StoreError(error, typeName: source.plan.typeName, key: key.description)
            }
            var hasher = Hasher()
            for path in paths {
                var bindings: ConditionEvaluator.Bindings = [(root, record)]
                if let value = try evaluator.evaluate(path, bindings: &bindings) {
                    hasher.combine(1 as UInt8)
                    value.fingerprint(into: &hasher)
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
    /// apart almost always differ.
    func fingerprint(into hasher: inout Hasher) {
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
