import MirrorStoreEngine

/// Reads a store file without its models, for tools: the types, schemas and records the file
/// itself describes. Opens the file read-only beside any writer (an app that has the store open
/// goes on committing; the inspector shows the last commit made when it opened, and newer ones
/// after ``refresh()``), takes no lock and never changes or creates a file.
///
/// ```swift
/// let inspector = try StoreInspector(path: "heroes.store")
/// for typeName in inspector.typeNames {
///     print(typeName, inspector.count(of: typeName))
/// }
/// try inspector.forEachRecord(of: "Hero") { record in print(record) }
/// ```
public final class StoreInspector: Sendable {
    let engine: StorageEngine
    let schemas: StoredSchemas

    /// Opens `path` read-only, beside a writer if one has it open; an encrypted store with the
    /// passphrase or key it was encrypted with.
    ///
    /// - Throws: `StorageError` when the file is missing, not a store, of a newer format, or its
    ///   compacted units are damaged, or the encryption given does not open it; ``StoreError``
    ///   when a stored schema does not decode. Units past the last whole one are not read (a
    ///   writer may be appending them): `verify` judges them.
    public init(path: String, encryption: EngineConfiguration.Encryption? = nil) throws {
        var configuration = EngineConfiguration()
        configuration.readsBesideWriter = true
        configuration.encryption = encryption
        engine = try StorageEngine(path: path, configuration: configuration)
        do {
            schemas = try StoredSchemas(snapshot: engine.snapshot())
        } catch {
            try? engine.close()
            throw error
        }
    }

    /// The stored type names, sorted.
    public var typeNames: [String] { engine.snapshot().typeNames.sorted() }

    /// The schema the file keeps for `typeName`.
    public func schema(of typeName: String) -> ObjectSchema? { schemas.schema(named: typeName) }

    /// The number of stored objects of `typeName`.
    public func count(of typeName: String) -> Int { engine.snapshot().count(type: typeName) }

    /// The app schema version recorded in the file, if any.
    public var schemaVersion: Int? {
        engine.snapshot().metadata(key: Store.schemaVersionKey).flatMap(Store.decodeVersion)
    }

    /// Sizes, counts and the last sequence number.
    public var statistics: EngineStatistics { engine.statistics }

    /// Calls `body` with every stored record of `typeName`, in key order, decoded with the file's
    /// schemas and with links resolved. The records are valid during the call only: they are
    /// released when it returns, so graphs with cycles are freed.
    ///
    /// - Throws: ``StoreError`` when the type is unknown or a record does not decode, or what
    ///   `body` throws.
    public func forEachRecord(of typeName: String, _ body: (ManagedObject) throws -> Void) throws {
        guard schemas.schema(named: typeName) != nil else { throw StoreError(.unknownModel(typeName: typeName)) }
        let reader = RecordReader(snapshot: engine.snapshot(), schemas: schemas)
        for record in try reader.allRecords(type: typeName) {
            try body(record)
        }
    }

    /// Shows the commits a writer made since the inspector opened or last refreshed; the stored
    /// schemas are those of the open (a tool restarts to see new ones).
    ///
    /// ```swift
    /// if try inspector.refresh() { print(inspector.count(of: "Hero")) }
    /// ```
    ///
    /// - Returns: Whether there were new commits.
    @discardableResult
    public func refresh() throws -> Bool { try engine.refresh().hasNewCommits }

    /// Closes the file.
    public func close() throws { try engine.close() }
}

/// The schemas a file stores, decoded once.
struct StoredSchemas: SchemaSource {
    private let schemas: [String: ObjectSchema]
    private let linkTargets: Set<String>

    init(snapshot: EngineSnapshot) throws {
        var schemas: [String: ObjectSchema] = [:]
        for typeName in snapshot.typeNames {
            guard let bytes = snapshot.schema(type: typeName) else { continue }
            do {
                schemas[typeName] = try SchemaCoding.decode(bytes)
            } catch {
                throw StoreError(.corruptedRecord(typeName: typeName, key: "(schema)", reason: error.reason))
            }
        }
        self.schemas = schemas
        linkTargets = schemas.values.linkTargets
    }

    func schema(named typeName: String) -> ObjectSchema? { schemas[typeName] }

    /// Every stored schema, by type name.
    var all: [String: ObjectSchema] { schemas }

    func isLinkTarget(_ typeName: String) -> Bool { linkTargets.contains(typeName) }
}
