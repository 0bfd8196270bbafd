import MirrorStore
import PostgresNIO

/// Reads rows into records on one connection, following links: each linked row is read once
/// per reader, so shared targets and cycles come back with the same shape, and the targets of a
/// batch of rows are read together, one query per linked type and depth (`WHERE key = ANY($1)`),
/// not one per row.
///
/// Only a read that may follow links keeps its records by key: a table without links leads
/// nowhere, so nothing can reach its rows twice.
final class RowReader {
    let connection: PostgresConnection
    let mapping: DatabaseMapping
    /// The store's prepared statements, for a read outside a transaction (``PreparedStatements``);
    /// `nil` runs every statement unprepared, as a write block must: a statement that fails there
    /// aborts the transaction, so it could not run again unprepared.
    let statements: PreparedStatements?
    private var loaded: [Identity: ManagedObject] = [:]
    /// The error a statement of this reader failed with, if any.
    private(set) var statementFailure: (any Error)?
    /// How many statements this reader ran: tests check that it reads links per type, not per row.
    private(set) var statementCount = 0
    /// The records that may link to others, whose graph is released once the models are made.
    private var linkingRecords: [ManagedObject] = []
    /// The records linking to a record, by source type, link property and the record's key:
    /// what the `LinkingObjects` of the models made list, read before they are made.
    private var inverseRecords: [InverseKey: [ManagedObject]] = [:]
    /// The records whose inverses are read.
    private var inversesRead = Set<Identity>()

    /// The records of `sourceType` linking through `property` to the object under `key`.
    private struct InverseKey: Hashable {
        let sourceType: String
        let property: String
        let key: RecordValue
    }

    /// A stored object: its type name and key.
    private struct Identity: Hashable {
        let typeName: String
        let key: RecordValue
    }

    /// A link, an array of links, or a `jsonb` value with links inside, read from a row, set
    /// once its targets are read.
    private struct PendingLink {
        let record: ManagedObject
        let column: ColumnMapping
        /// The objects linked to, in order; a `.null` key stands for a `nil` element.
        let targets: [Identity]
        /// The `jsonb` value holding the links, decoded once they are read.
        var json: JSONValue?

        /// The value to set once the targets are read: a target that is gone reads as `nil`
        /// (as the foreign key's `ON DELETE SET NULL` makes a single link), and is dropped
        /// from an array of non-optional links, as the file store reads them; `jsonb` decodes
        /// its links the same way.
        func value(coding: ColumnCoding, key: () -> String, _ target: (Identity) -> ManagedObject?) throws -> RecordValue {
            switch column.storage {
            case .linkArray(_, _, let elementsOptional):
                return .list(List(targets.compactMap { identity in
                    if let found = target(identity) { return .object(found) }
                    return elementsOptional ? .null : nil
                }))
            case .json:
                guard let json else { return .null }
                return try coding.decode(json, column: column, key: key) { typeName, key in
                    target(Identity(typeName: typeName, key: key)).map(RecordValue.object) ?? .null
                }
            default:
                return targets.first.flatMap(target).map(RecordValue.object) ?? .null
            }
        }
    }

    init(connection: PostgresConnection, mapping: DatabaseMapping, statements: PreparedStatements? = nil) {
        self.connection = connection
        self.mapping = mapping
        self.statements = statements
    }

    deinit {
        // Records mirror the model graph, cycles included: break them once the models are made.
        for record in linkingRecords { record.releaseGraph() }
    }

    /// The statement reading `table`'s rows that `condition` selects, in the order `orderBy` gives.
    private static func select(
        table: TableMapping, condition: String?, parameters: SQLParameters, orderBy: String, limit: Int?
    ) -> (sql: String, parameters: SQLParameters) {
        var sql = table.selectFromTable
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(orderBy)"
        var parameters = parameters
        if let limit { sql += " LIMIT \(parameters.add(Int64(limit)))" }
        return (sql, parameters)
    }

    /// The records of `table`'s rows that `condition` selects, in the order `orderBy` gives.
    func records(
        table: TableMapping, condition: String?, parameters: SQLParameters, orderBy: String, limit: Int?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [ManagedObject] {
        let (sql, parameters) = Self.select(table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
        var pending: [PendingLink] = []
        let found = try await read(sql, parameters, table: table, tracking: table.readsThroughRecords, pending: &pending)
        try await resolve(pending)
        try await readInverses(of: found)
        return found
    }

    /// The record of `table` under `key`, or `nil`.
    func record(table: TableMapping, key: RecordValue, isolation: isolated (any Actor)? = #isolation) async throws -> ManagedObject? {
        if let known = loaded[Identity(typeName: table.typeName, key: key)] { return known }
        var pending: [PendingLink] = []
        guard let found = try await read(table: table, keys: [key], tracking: table.readsThroughRecords, pending: &pending).first else { return nil }
        try await resolve(pending)
        try await readInverses(of: [found])
        return found
    }

    /// The models of `table`'s rows that `condition` selects, in the order `orderBy` gives: made
    /// from each row's values when the table has no links nor inverses (see
    /// ``directModel(_:table:row:coding:values:)``), else from records whose links and inverses are read.
    func models<Model: Persistable>(
        _ type: Model.Type, table: TableMapping, condition: String?, parameters: SQLParameters, orderBy: String, limit: Int?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Model] {
        guard !table.readsThroughRecords else {
            let records = try await records(table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
            return try records.map { try model(Model.self, from: $0) }
        }
        let (sql, parameters) = Self.select(table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
        return try await directModels(Model.self, sql, parameters, table: table)
    }

    /// The model of `table` under `key`, or `nil`, made as ``models(_:table:condition:parameters:orderBy:limit:isolation:)`` makes them.
    func model<Model: Persistable>(
        _ type: Model.Type, table: TableMapping, key: RecordValue, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Model? {
        guard !table.readsThroughRecords, case .scalar(let keyType) = table.primaryKey.storage else {
            return try await record(table: table, key: key).map { try model(Model.self, from: $0) }
        }
        var parameters = SQLParameters()
        _ = try parameters.add(key, type: keyType)
        return try await directModels(Model.self, table.selectByKey, parameters, table: table).first
    }

    /// The model made from `record`, its `LinkingObjects` filled when the models declare any.
    func model<Model: Persistable>(_ type: Model.Type, from record: ManagedObject) throws -> Model {
        guard mapping.hasInverses else { return try Model.modelInstance(managedObject: record) }
        return try mapping.models.model(Model.self, from: record, linkingRecords: self)
    }

    /// Reads the records linking to `roots` and to every record read so far, for the
    /// `LinkingObjects` their models declare, then those linking to the records this read, until
    /// none is new: one query per inverse and round (`link = ANY($1)`, or `links && $1` for an
    /// array of links), in primary-key order, as the file store lists them.
    private func readInverses(of roots: [ManagedObject], isolation: isolated (any Actor)? = #isolation) async throws {
        guard mapping.hasInverses else { return }
        var candidates = roots + loaded.values
        while true {
            var keysByType: [String: [RecordValue]] = [:]
            for record in candidates {
                guard let table = mapping.tables[record.objectSchema.typeName], !table.inverses.isEmpty else { continue }
                let key = record[propertyAt: table.primaryKey.position]
                guard inversesRead.insert(Identity(typeName: table.typeName, key: key)).inserted else { continue }
                keysByType[table.typeName, default: []].append(key)
            }
            guard !keysByType.isEmpty else { return }
            for typeName in keysByType.keys.sorted() {
                let table = try mapping.table(named: typeName)
                for inverse in table.inverses {
                    try await readSources(of: inverse, linkingTo: keysByType[typeName] ?? [], of: table)
                }
            }
            candidates = Array(loaded.values)
        }
    }

    /// Reads the records of `inverse`'s source type linking to `keys` of `table`, noting each
    /// under every key it links to, once.
    private func readSources(
        of inverse: BackendModels.Inverse, linkingTo keys: [RecordValue], of table: TableMapping, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        let source = try mapping.table(named: inverse.sourceTypeName)
        guard let column = source.column(named: inverse.property) else { return }
        var parameters = SQLParameters()
        let placeholder = try parameters.addKeys(keys, of: table)
        let test = if case .linkArray = column.storage { "\(column.quotedName) && \(placeholder)" } else { "\(column.quotedName) = ANY(\(placeholder))" }
        let sql = "SELECT \(source.selectList) FROM \(source.table) WHERE \(test) ORDER BY \(source.primaryKey.quotedName)"
        var pending: [PendingLink] = []
        let found = try await read(sql, parameters, table: source, tracking: true, pending: &pending)
        try await resolve(pending)
        let wanted = Set(keys)
        for record in found {
            var linked = Set<RecordValue>()
            let value = record[propertyAt: column.position]
            let targets: [RecordValue] = if case .list(let elements) = value { Array(elements) } else { [value] }
            for case .object(let target) in targets {
                let key = target[propertyAt: table.primaryKey.position]
                guard wanted.contains(key), linked.insert(key).inserted else { continue }
                inverseRecords[InverseKey(sourceType: source.typeName, property: inverse.property, key: key), default: []].append(record)
            }
        }
    }

    /// Reads the rows of `table` under `keys` (not read yet), noting their links in `pending`:
    /// one key is bound as itself (`key = $1`), several as an array (`key = ANY($1)`).
    private func read(
        table: TableMapping, keys: [RecordValue], tracking: Bool, pending: inout [PendingLink], isolation: isolated (any Actor)? = #isolation
    ) async throws -> [ManagedObject] {
        var parameters = SQLParameters()
        if keys.count == 1, case .scalar(let keyType) = table.primaryKey.storage {
            _ = try parameters.add(keys[0], type: keyType)
            return try await read(table.selectByKey, parameters, table: table, tracking: tracking, pending: &pending)
        }
        let placeholder = try parameters.addKeys(keys, of: table)
        let sql = "SELECT \(table.selectList) FROM \(table.table) WHERE \(table.primaryKey.quotedName) = ANY(\(placeholder))"
        return try await read(sql, parameters, table: table, tracking: tracking, pending: &pending)
    }

    /// Reads the targets of `pending` links, type by type, then the links those rows hold, until
    /// every link is set.
    private func resolve(_ links: [PendingLink], isolation: isolated (any Actor)? = #isolation) async throws {
        var pending = links
        while !pending.isEmpty {
            var missing: [String: [RecordValue]] = [:]
            var asked = Set<Identity>()
            for link in pending {
                for identity in link.targets where !isNull(identity.key) {
                    guard loaded[identity] == nil, asked.insert(identity).inserted else { continue }
                    missing[identity.typeName, default: []].append(identity.key)
                }
            }
            var next: [PendingLink] = []
            for target in missing.keys.sorted() {
                _ = try await read(table: try mapping.table(named: target), keys: missing[target] ?? [], tracking: true, pending: &next)
            }
            var codings: [String: ColumnCoding] = [:]
            for link in pending {
                func keyText() -> String { link.record.objectSchema.primaryKey.flatMap { link.record[$0] }.map(PrimaryKeys.messageText) ?? "?" }
                let typeName = link.record.objectSchema.typeName
                let coding = codings[typeName] ?? ColumnCoding(models: mapping.models, typeName: typeName)
                codings[typeName] = coding
                let value = try link.value(coding: coding, key: keyText) { loaded[$0] }
                try set(value, link.column, of: link.record, key: keyText)
            }
            pending = next
        }
    }

    /// Runs `sql` and makes a record of each row of `table` it returns, as the rows arrive;
    /// `tracking` keeps them by key (see ``record(table:row:coding:tracking:pending:)``).
    private func read(
        _ sql: String, _ parameters: SQLParameters, table: TableMapping, tracking: Bool, pending: inout [PendingLink],
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [ManagedObject] {
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        return try await rows(sql, parameters).map { try record(table: table, row: $0, coding: coding, tracking: tracking, pending: &pending) }
    }

    /// Runs `sql` and makes a model of each row of `table` it returns (see ``directModel(_:table:row:coding:values:)``).
    private func directModels<Model: Persistable>(
        _ type: Model.Type, _ sql: String, _ parameters: SQLParameters, table: TableMapping, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Model] {
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        let rows = try await rows(sql, parameters)
        var found: [Model] = []
        found.reserveCapacity(rows.count)
        // One buffer for every row's values: each model copies them out.
        var values: [RecordValue] = []
        values.reserveCapacity(table.columns.count)
        for row in rows { found.append(try directModel(Model.self, table: table, row: row, coding: coding, values: &values)) }
        return found
    }

    /// The rows `sql` returns, received whole: `collect()` runs off the caller's actor, where
    /// reading them one by one would come back to it for each; and a row that does not read
    /// back then fails the read, not the statement.
    private func rows(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)? = #isolation) async throws -> [PostgresRow] {
        statementCount += 1
        do {
            return try await Failures.translating(mapping) {
                if let statements { return try await statements.rows(sql, parameters, on: connection) }
                return try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: parameters.bindings))
            }
        } catch {
            statementFailure = statementFailure ?? error
            throw error
        }
    }

    /// The text of the key of `row`, to name it in an error.
    private static func keyText(of row: PostgresRow, table: TableMapping, coding: ColumnCoding) -> String {
        guard let cell = row.first(where: { $0.columnIndex == table.primaryKey.position }),
              let key = try? coding.read(cell.sentForm, column: table.primaryKey, key: { "?" }) else { return "?" }
        return PrimaryKeys.messageText(key)
    }

    /// The model of one row of a table without links, made from its cells' values by
    /// `BackendModels.model(_:values:)`: straight into the model when it has only single values.
    private func directModel<Model: Persistable>(
        _ type: Model.Type, table: TableMapping, row: PostgresRow, coding: ColumnCoding, values: inout [RecordValue]
    ) throws -> Model {
        guard row.count == table.columns.count else {
            throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has \(row.count) columns, the model \(table.columns.count)"))
        }
        func keyText() -> String { Self.keyText(of: row, table: table, coding: coding) }
        values.removeAll(keepingCapacity: true)
        let scalarTypes = table.scalarTypes
        var column = 0
        for cell in row {
            let cell = cell.sentForm
            // The general read runs again only to say why a cell does not read.
            if let type = scalarTypes[column], let value = ColumnCoding.scalar(cell, type: type) {
                values.append(value)
            } else {
                values.append(try coding.read(cell, column: table.columns[column], key: keyText))
            }
            column += 1
        }
        do {
            return try mapping.models.model(Model.self, values: values)
        } catch {
            throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: keyText(), reason: "\(error)"))
        }
    }

    /// The record of one row; its links go to `pending`. With `tracking`, it is known by its key
    /// before its links are set, so a cycle back to it finds it, and a row read before is not
    /// made twice.
    private func record(
        table: TableMapping, row: PostgresRow, coding: ColumnCoding, tracking: Bool, pending: inout [PendingLink]
    ) throws -> ManagedObject {
        guard row.count == table.columns.count else {
            throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has \(row.count) columns, the model \(table.columns.count)"))
        }
        func keyText() -> String { Self.keyText(of: row, table: table, coding: coding) }
        let record = ManagedObject(objectSchema: table.schema)
        var links: [PendingLink] = []
        var column = 0
        for cell in row {
            let cell = cell.sentForm
            let mapping = table.columns[column]
            column += 1
            if case .json = mapping.storage, !mapping.embeddedLinkTargets.isEmpty {
                // Decoded once the targets of its links are read.
                guard let json = try coding.json(cell, column: mapping, key: keyText) else {
                    try set(.null, mapping, of: record, key: keyText)
                    continue
                }
                var targets: [Identity] = []
                _ = try coding.decode(json, column: mapping, key: keyText) { typeName, key in
                    targets.append(Identity(typeName: typeName, key: key))
                    return .null
                }
                links.append(PendingLink(record: record, column: mapping, targets: targets, json: json))
                continue
            }
            let value = try coding.read(cell, column: mapping, key: keyText)
            if case .link(let target, _) = mapping.storage, !isNull(value) {
                links.append(PendingLink(record: record, column: mapping, targets: [Identity(typeName: target, key: value)]))
            } else if case .linkArray(let target, _, _) = mapping.storage, case .list(let keys) = value {
                links.append(PendingLink(record: record, column: mapping, targets: keys.map { Identity(typeName: target, key: $0) }))
            } else {
                try set(value, mapping, of: record, key: keyText)
            }
        }
        if tracking {
            let identity = Identity(typeName: table.typeName, key: record[propertyAt: table.primaryKey.position])
            if let known = loaded[identity] { return known }
            loaded[identity] = record
        }
        if table.hasLinks { linkingRecords.append(record) }
        pending.append(contentsOf: links)
        return record
    }

    /// Sets `column` of `record` to `value`; `key` names the row in an error, and is asked for
    /// only then.
    private func set(_ value: RecordValue, _ column: ColumnMapping, of record: ManagedObject, key: () -> String) throws {
        do {
            try record.setValue(value, forPropertyAt: column.position)
        } catch {
            throw PostgresStoreError(.corruptedRow(typeName: record.objectSchema.typeName, key: key(), reason: "\(error)"))
        }
    }

    private func isNull(_ value: RecordValue) -> Bool {
        if case .null = value { return true }
        return false
    }
}

extension RowReader: LinkingRecordSource {
    /// The records each inverse of `record`'s model lists, in the model's order of inverses.
    func inverseRecords(of record: ManagedObject) -> [[ManagedObject]] {
        guard let table = mapping.tables[record.objectSchema.typeName], !table.inverses.isEmpty else { return [] }
        let key = record[propertyAt: table.primaryKey.position]
        return table.inverses.map { inverseRecords[InverseKey(sourceType: $0.sourceTypeName, property: $0.property, key: key)] ?? [] }
    }

    /// The records read ahead by ``readInverses(of:isolation:)``.
    func records(of sourceType: String, linkingThrough property: String, to key: RecordValue) throws -> [ManagedObject] {
        inverseRecords[InverseKey(sourceType: sourceType, property: property, key: key)] ?? []
    }
}

extension PostgresCell {
    /// The cell as the server sent it: in binary, which postgres-nio asks for every result column
    /// of every statement it runs; but the rows of a statement prepared with `prepare(query:)`
    /// (``PreparedStatements``) carry the format the statement's description gave, text.
    var sentForm: PostgresCell {
        var cell = self
        cell.format = .binary
        return cell
    }
}
