/// A problem particular to the PostgreSQL backend: the server cannot be reached, a model has a
/// property this backend does not store yet, or the server refused a statement.
///
/// Errors the file store has too are MirrorStore's own: a unique violation is
/// `StoreError.uniqueViolation`, an unknown model `StoreError.unknownModel`.
///
/// ```swift
/// do {
///     _ = try await PostgresStore.open(settings, models: [Hero.self])
/// } catch let error as PostgresStoreError {
///     print(error)   // Cannot connect to PostgreSQL at 127.0.0.1:1: connection refused.
/// }
/// ```
public struct PostgresStoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong. New cases may be added; switch with a `default`.
    public enum Kind: Equatable, Sendable {
        /// The server at `host:port` could not be reached or refused the login.
        case connectionFailed(host: String, port: Int, reason: String)
        /// `typeName.property` has a kind this backend does not store yet; nothing was created.
        case unsupportedProperty(typeName: String, property: String, kind: String, reason: String)
        /// `typeName.property` holds a value PostgreSQL cannot keep exactly; nothing was written.
        case unstorableValue(typeName: String, property: String, reason: String)
        /// A model type is not stored in a table of its own: it has no primary key, or a name
        /// PostgreSQL cannot take as an identifier.
        case unsupportedModel(typeName: String, reason: String)
        /// A stored row does not read back as the model's record.
        case corruptedRow(typeName: String, key: String, reason: String)
        /// The server refused a statement; `sqlState` is its five-character code.
        case server(sqlState: String, message: String)
        /// A query combines steps this backend does not run yet (a filter after `prefix`).
        case unsupportedQuery(reason: String)
        /// The database cannot hold the models as this backend needs: its encoding is not UTF-8,
        /// which comparing strings as Swift does (`normalize(…, NFC)`) requires.
        case unsupportedDatabase(database: String, reason: String)
        /// The migration of `typeName`'s table cannot be carried out; nothing was changed.
        case migrationFailed(typeName: String, reason: String)
        /// The server at `host:port` did not answer a call within `timeout`
        /// (``PostgresSettings/callTimeout``): no connection could be opened, or its statements
        /// got no answer. The store keeps working once the server answers again.
        case timedOut(host: String, port: Int, timeout: Duration, reason: String)
        /// The store was closed before or during the call.
        case closed
    }

    /// What went wrong.
    public let kind: Kind

    /// An error of `kind`.
    public init(_ kind: Kind) { self.kind = kind }

    /// One sentence saying what went wrong and what to do.
    public var description: String {
        switch kind {
        case .connectionFailed(let host, let port, let reason):
            "Cannot connect to PostgreSQL at \(host):\(port): \(reason)."
        case .unsupportedProperty(let typeName, let property, let kind, let reason):
            "\(typeName).\(property) has kind \(kind), which the PostgreSQL backend does not store yet: \(reason); list it in ignoredProperties or use the file store."
        case .unstorableValue(let typeName, let property, let reason):
            "\(typeName).\(property) holds \(reason), which PostgreSQL cannot store exactly; nothing was written."
        case .unsupportedModel(let typeName, let reason):
            "\(typeName) cannot have a PostgreSQL table: \(reason)."
        case .corruptedRow(let typeName, let key, let reason):
            "The stored \(typeName) row with key \(key) cannot be read: \(reason)."
        case .server(let sqlState, let message):
            "PostgreSQL refused a statement (SQLSTATE \(sqlState)): \(message)."
        case .unsupportedQuery(let reason):
            "The query cannot run on PostgreSQL: \(reason)."
        case .unsupportedDatabase(let database, let reason):
            "The PostgreSQL database \(database) cannot keep MirrorStore's models: \(reason); create it with ENCODING 'UTF8'."
        case .migrationFailed(let typeName, let reason):
            "The migration of \(typeName) cannot be carried out: \(reason); the database was left as it was."
        case .timedOut(let host, let port, let timeout, let reason):
            "PostgreSQL at \(host):\(port) did not answer within \(timeout): \(reason); the call was abandoned."
        case .closed:
            "The PostgreSQL store was closed; open it again to use it."
        }
    }
}
