import MirrorStore
import PostgresNIO

/// What deletes under the models' ``MirrorStore/DeleteRule``s need: the mapping, a way to run a
/// statement in the SQL transaction, and a place to note what changed. A write transaction and a
/// migration (``MigrationStatements``) delete through it alike.
protocol RuledDeletes {
    var mapping: DatabaseMapping { get }
    /// Runs one statement and returns its rows.
    func run(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)?) async throws -> [PostgresRow]
    /// Notes that the object of `typeName` under `key` changed.
    func noteChange(_ typeName: String, key: RecordValue)
}

/// A stored object: its type name and key.
private struct Identity: Hashable {
    let typeName: String
    let key: RecordValue
}

/// Deletes under the models' ``MirrorStore/DeleteRule``s, in the SQL transaction, as the file
/// store applies them: the targets of `.cascade` links go too, at any depth, each once; a `.deny`
/// link from an object that stays refuses the whole delete before anything is deleted.
extension RuledDeletes {
    /// Deletes the objects of `table` under `keys` and what the rules delete with them, all or
    /// (when a rule denies one) none.
    ///
    /// - Returns: How many of `keys` were stored, and deleted.
    /// - Throws: `StoreError.deleteDenied`, deleting nothing.
    func deleteFollowingRules(
        _ table: TableMapping, keys: [RecordValue], isolation: isolated (any Actor)? = #isolation
    ) async throws -> Int {
        try await deleteFollowingRules([(table, keys)])
    }

    /// Deletes the objects `roots` name, of one or more tables, and what the rules delete with
    /// them, all or (when a rule denies one) none: one delete, whose cascades read the links as
    /// the rows hold them and whose denials look at every object that stays.
    ///
    /// - Returns: How many of the roots were stored, and deleted.
    /// - Throws: `StoreError.deleteDenied`, deleting nothing.
    func deleteFollowingRules(
        _ roots: [(table: TableMapping, keys: [RecordValue])], isolation: isolated (any Actor)? = #isolation
    ) async throws -> Int {
        var seen = Set<Identity>()
        var deleted: [(table: TableMapping, keys: [RecordValue])] = []
        var rootCount = 0
        var level = roots
        var isRoot = true
        while !level.isEmpty {
            var next: [String: (table: TableMapping, keys: [RecordValue])] = [:]
            for (table, keys) in level {
                let fresh = keys.filter { seen.insert(Identity(typeName: table.typeName, key: $0)).inserted }
                guard !fresh.isEmpty else { continue }
                let links = mapping.deleteRules.cascades[table.typeName] ?? []
                let rows = try await storedRows(of: table, keys: fresh, columns: links.map(\.column))
                if isRoot { rootCount += rows.count }
                guard !rows.isEmpty else { continue }
                deleted.append((table, rows.map(\.key)))
                for row in rows {
                    for (link, value) in zip(links, row.values) {
                        let targets = Self.keys(in: value)
                        guard !targets.isEmpty else { continue }
                        let targetTable = try mapping.table(named: link.target)
                        next[link.target, default: (targetTable, [])].keys.append(contentsOf: targets)
                    }
                }
            }
            isRoot = false
            level = next.keys.sorted().compactMap { next[$0] }
        }
        // A type may be reached at several depths: its keys are checked together, so that the
        // object named is the first in `StoreError.deleteDenied`'s documented order.
        var deletedByType: [String: (table: TableMapping, keys: [RecordValue])] = [:]
        for (table, keys) in deleted { deletedByType[table.typeName, default: (table, [])].keys += keys }
        for typeName in deletedByType.keys.sorted() {
            guard let entry = deletedByType[typeName], let links = mapping.deleteRules.denials[typeName] else { continue }
            var first: (target: RecordValue, link: DeleteRuleLinks.Link, source: RecordValue)?
            for link in links {
                guard let found = try await firstSource(through: link, linksTo: entry.keys, of: entry.table, deleting: seen) else { continue }
                // Links come in their order: only a smaller target wins.
                if first.map({ PrimaryKeys.precedes(found.target, $0.target) }) ?? true { first = (found.target, link, found.source) }
            }
            if let first {
                throw StoreError(.deleteDenied(
                    typeName: typeName, key: PrimaryKeys.messageText(first.target), linkedFrom: first.link.source.typeName,
                    sourceKey: PrimaryKeys.messageText(first.source), property: first.link.column.property))
            }
        }
        for (table, keys) in deleted {
            var parameters = SQLParameters()
            let placeholder = try parameters.addKeys(keys, of: table)
            _ = try await run("DELETE FROM \(table.table) WHERE \(table.primaryKey.quotedName) = ANY(\(placeholder))", parameters, isolation: isolation)
            for key in keys { noteChange(table.typeName, key: key) }
        }
        return rootCount
    }

    /// The stored rows of `table` under `keys`, each with its key and the values of `columns`.
    private func storedRows(
        of table: TableMapping, keys: [RecordValue], columns: [ColumnMapping], isolation: isolated (any Actor)? = #isolation
    ) async throws -> [(key: RecordValue, values: [RecordValue])] {
        var parameters = SQLParameters()
        let placeholder = try parameters.addKeys(keys, of: table)
        let selected = ([table.primaryKey] + columns).map { $0.selectExpression(table: table.table) }.joined(separator: ", ")
        let rows = try await run(
            "SELECT \(selected) FROM \(table.table) WHERE \(table.primaryKey.quotedName) = ANY(\(placeholder))", parameters, isolation: isolation)
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        return try rows.map { row in
            var cells = row.makeIterator()
            var values: [RecordValue] = []
            for column in [table.primaryKey] + columns {
                guard let cell = cells.next() else { break }
                values.append(try coding.read(cell, column: column, key: { "?" }))
            }
            guard let key = values.first else {
                throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has no key"))
            }
            return (key, Array(values.dropFirst()))
        }
    }

    /// The first of `keys` of `table` that an object outside `deleting` links to through
    /// `link`, by key, with the first such object by key; `nil` when none does.
    private func firstSource(
        through link: DeleteRuleLinks.Link, linksTo keys: [RecordValue], of table: TableMapping, deleting: Set<Identity>,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> (target: RecordValue, source: RecordValue)? {
        let source = link.source
        var parameters = SQLParameters()
        let placeholder = try parameters.addKeys(keys, of: table)
        let column = link.column.quotedName
        // `&&` (overlap) for an array of keys, which the column's GIN index answers.
        let test = if case .linkArray = link.column.storage { "\(column) && \(placeholder)" } else { "\(column) = ANY(\(placeholder))" }
        let selected = [source.primaryKey, link.column].map { $0.selectExpression(table: source.table) }.joined(separator: ", ")
        let rows = try await run("SELECT \(selected) FROM \(source.table) WHERE \(test)", parameters, isolation: isolation)
        let coding = ColumnCoding(models: mapping.models, typeName: source.typeName)
        let deleted = Set(keys)
        var first: (target: RecordValue, source: RecordValue)?
        for row in rows {
            var cells = row.makeIterator()
            guard let keyCell = cells.next(), let linkCell = cells.next() else { continue }
            let sourceKey = try coding.read(keyCell, column: source.primaryKey, key: { "?" })
            guard !deleting.contains(Identity(typeName: source.typeName, key: sourceKey)) else { continue }
            let linked = Self.keys(in: try coding.read(linkCell, column: link.column, key: { PrimaryKeys.messageText(sourceKey) }))
            for target in linked where deleted.contains(target) {
                if let current = first,
                   PrimaryKeys.precedes(current.target, target) || (current.target == target && !PrimaryKeys.precedes(sourceKey, current.source)) {
                    continue
                }
                first = (target, sourceKey)
            }
        }
        return first
    }

    /// The keys a link column's value holds: one for a link, those of an array of links.
    private static func keys(in value: RecordValue) -> [RecordValue] {
        switch value {
        case .null: []
        case .list(let keys): keys.filter { $0 != .null }
        default: [value]
        }
    }
}

extension PostgresWriteTransaction: RuledDeletes {}

/// Runs a migration's statements on the open's connection, inside its transaction: what a
/// migration's deletes under the delete rules run through.
struct MigrationStatements: RuledDeletes {
    let connection: PostgresConnection
    let mapping: DatabaseMapping

    func run(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)? = #isolation) async throws -> [PostgresRow] {
        try await Failures.translating(mapping) {
            try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: parameters.bindings))
        }
    }

    /// A migration sends no change notice: it runs while the store opens.
    func noteChange(_ typeName: String, key: RecordValue) {}
}
