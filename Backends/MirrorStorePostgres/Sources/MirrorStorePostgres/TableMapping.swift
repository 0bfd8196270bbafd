import Foundation
import MirrorStore
import Synchronization

/// How one single value is kept in a column. Chosen so that a value reads back exactly as it was
/// written (see the package README's table).
enum ScalarType: Sendable, Equatable {
    /// `Bool`: `boolean`.
    case boolean
    /// Every signed integer width: `bigint`.
    case bigint
    /// Every unsigned integer width: `numeric(20,0)`, which holds all of `UInt64`.
    case unsigned
    /// `Float`: `real`.
    case real
    /// `Double`: `double precision`.
    case double
    /// `String`: `text`.
    case text
    /// `Data`: `bytea`.
    case bytea
    /// `Date`: `double precision`, seconds since 2001-01-01 as `Date` keeps them; `timestamptz`
    /// would round to microseconds.
    case date
    /// `UUID`: `uuid`.
    case uuid
    /// `Decimal`: `numeric`, written and read as text.
    case decimal
    /// `URL`: `text`, its absolute string.
    case url

    init?(_ kind: PropertyKind) {
        switch kind {
        case .bool: self = .boolean
        case .int, .int8, .int16, .int32, .int64: self = .bigint
        case .uint, .uint8, .uint16, .uint32, .uint64: self = .unsigned
        case .float: self = .real
        case .double: self = .double
        case .string: self = .text
        case .data: self = .bytea
        case .date: self = .date
        case .uuid: self = .uuid
        case .decimal: self = .decimal
        case .url: self = .url
        default: return nil
        }
    }

    var sqlType: String {
        switch self {
        case .boolean: "boolean"
        case .bigint: "bigint"
        case .unsigned: "numeric(20,0)"
        case .real: "real"
        case .double, .date: "double precision"
        case .text, .url: "text"
        case .bytea: "bytea"
        case .uuid: "uuid"
        case .decimal: "numeric"
        }
    }

    /// Whether arrays of this type are native PostgreSQL arrays (the others are `jsonb`).
    var hasNativeArray: Bool {
        switch self {
        case .boolean, .bigint, .real, .double, .text, .bytea, .uuid, .date: true
        case .unsigned, .decimal, .url: false
        }
    }

    /// Whether values are bound and read as text and cast on the server.
    var isTextEncoded: Bool { self == .unsigned || self == .decimal }
}

/// Where one property's value lives in its table.
enum ColumnStorage: Sendable, Equatable {
    /// A single value in a typed column.
    case scalar(ScalarType)
    /// An array or a set of single values in a native array column.
    case array(ScalarType)
    /// A to-one link to a model with a primary key: that key, with a foreign key to its table.
    case link(targetTypeName: String, key: ScalarType)
    /// An array, a set or a `List` of links (`[Pet]`, `Set<Pet>`, `[Pet?]`): a native array of
    /// the targets' keys, in the model's order, `NULL` elements for `nil` ones when
    /// `elementsOptional`. PostgreSQL has no foreign keys on array elements: a key whose target
    /// is gone is dropped on read (`nil` when `elementsOptional`), as the file store reads it.
    /// Bound and read in PostgreSQL's array text form (see `KeyArrayText.swift`), which carries
    /// `NULL` elements that postgres-nio's arrays cannot.
    case linkArray(targetTypeName: String, key: ScalarType, elementsOptional: Bool)
    /// Embedded models, dictionaries and other containers: `jsonb` (see `JSONCoding.swift`).
    /// Links inside them are their targets' keys.
    case json
}

/// One property's column.
struct ColumnMapping: Sendable {
    let property: String
    let position: Int
    let kind: PropertyKind
    let storage: ColumnStorage
    let isNullable: Bool
    let isPrimaryKey: Bool
    /// The types a `jsonb` value links to from inside embedded models and containers, by key.
    let embeddedLinkTargets: [String]
    /// The column's name quoted: spelled once, since every query naming the column spells it.
    let quotedName: String

    init(
        property: String, position: Int, kind: PropertyKind, storage: ColumnStorage, isNullable: Bool, isPrimaryKey: Bool,
        embeddedLinkTargets: [String] = []
    ) {
        self.property = property
        self.position = position
        self.kind = kind
        self.storage = storage
        self.isNullable = isNullable
        self.isPrimaryKey = isPrimaryKey
        self.embeddedLinkTargets = embeddedLinkTargets
        quotedName = SQL.identifier(property)
    }

    var sqlType: String {
        switch storage {
        case .scalar(let type): type.sqlType
        case .array(let type): type.sqlType + "[]"
        case .link(_, let key): key.sqlType
        case .linkArray(_, let key, _): key.sqlType + "[]"
        case .json: "jsonb"
        }
    }

    /// The target type of a link or of an array of links.
    var linkTarget: String? {
        switch storage {
        case .link(let target, _), .linkArray(let target, _, _): target
        case .scalar, .array, .json: nil
        }
    }

    /// Every type the column's values link to: its link's or array's target, or the targets
    /// inside its `jsonb`.
    var linkTargets: [String] { linkTarget.map { [$0] } ?? embeddedLinkTargets }

    /// The select-list expression: columns bound as text are read as text.
    func selectExpression(table: String) -> String {
        let column = "\(table).\(quotedName)"
        switch storage {
        case .scalar(let type) where type.isTextEncoded: return column + "::text"
        case .link(_, let key) where key.isTextEncoded: return column + "::text"
        case .json, .linkArray: return column + "::text"
        default: return column
        }
    }

    /// The placeholder of parameter `number` for this column's value, cast where it is bound as text.
    func placeholder(_ number: Int) -> String {
        switch storage {
        case .scalar(let type) where type.isTextEncoded: "$\(number)::\(type.sqlType)"
        case .link(_, let key) where key.isTextEncoded: "$\(number)::\(key.sqlType)"
        case .json: "$\(number)::jsonb"
        case .linkArray: "$\(number)::\(sqlType)"
        default: "$\(number)"
        }
    }
}

/// A model type kept in a table of its own, with the SQL text every read and write of it uses,
/// spelled once when the store opens rather than per statement. A class: every statement looks
/// its table up, and a copy of this many fields is not free.
final class TableMapping: Sendable {
    let schema: ObjectSchema
    let columns: [ColumnMapping]
    let primaryKey: ColumnMapping
    /// The secondary indexes: name, expression list and uniqueness.
    let indexes: [SQLIndex]
    /// The unique arrays and sets, each enforced through a side table of its elements.
    let uniqueElements: [UniqueElements]
    /// The quoted table name.
    let table: String
    /// What a read selects: every column, in `columns` order.
    let selectList: String
    /// The upsert of one object, its columns bound as `$1` … in `columns` order.
    let upsertStatement: String
    /// The read of one object: its key bound as `$1`.
    let selectByKey: String
    /// The start of every read of the table's rows: `SELECT` of every column `FROM` the table.
    let selectFromTable: String
    /// The last term of every `ORDER BY`: the primary key, a text key byte by byte.
    let keyOrder: String
    /// The type of each column of `columns` that holds one value (a scalar or a link's key),
    /// `nil` for arrays and `jsonb`: how a row's cells read, resolved once.
    let scalarTypes: [ScalarType?]
    /// The index in `columns` of each property's column, by property name.
    private let columnIndexes: [String: Int]
    /// Whether a column links to another model, so reading a row may lead back to it.
    let hasLinks: Bool
    /// The model's `LinkingObjects` properties, which a read fills from the rows linking to it.
    let inverses: [BackendModels.Inverse]
    /// Whether the model has unique properties or arrays, kept by constraints checked at `COMMIT`.
    let keepsUniqueValues: Bool
    /// Whether a read makes its models from records, whose links and inverses are read first,
    /// rather than straight from each row's values.
    var readsThroughRecords: Bool { hasLinks || !inverses.isEmpty }

    init(
        schema: ObjectSchema, columns: [ColumnMapping], primaryKey: ColumnMapping, indexes: [SQLIndex], uniqueElements: [UniqueElements],
        inverses: [BackendModels.Inverse]
    ) {
        self.schema = schema
        self.uniqueElements = uniqueElements
        self.inverses = inverses
        self.columns = columns
        self.primaryKey = primaryKey
        self.indexes = indexes
        let table = SQL.identifier(schema.typeName)
        self.table = table
        selectList = columns.map { $0.selectExpression(table: table) }.joined(separator: ", ")
        let names = columns.map(\.quotedName).joined(separator: ", ")
        let placeholders = columns.enumerated().map { $1.placeholder($0 + 1) }.joined(separator: ", ")
        let updates = columns.filter { !$0.isPrimaryKey }.map { "\($0.quotedName) = EXCLUDED.\($0.quotedName)" }
        let conflict = updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))"
        upsertStatement = "INSERT INTO \(table) (\(names)) VALUES (\(placeholders)) ON CONFLICT (\(primaryKey.quotedName)) \(conflict)"
        selectByKey = "SELECT \(selectList) FROM \(table) WHERE \(primaryKey.quotedName) = \(primaryKey.placeholder(1))"
        selectFromTable = "SELECT \(selectList) FROM \(table)"
        let qualifiedKey = "\(table).\(primaryKey.quotedName)"
        if case .scalar(.text) = primaryKey.storage { keyOrder = qualifiedKey + " COLLATE \"C\"" } else { keyOrder = qualifiedKey }
        scalarTypes = columns.map { column in
            switch column.storage {
            case .scalar(let type), .link(_, let type): type
            case .array, .linkArray, .json: nil
            }
        }
        columnIndexes = columns.indices.reduce(into: [:]) { indexes, index in indexes[columns[index].property] = indexes[columns[index].property] ?? index }
        hasLinks = columns.contains { !$0.linkTargets.isEmpty }
        keepsUniqueValues = !uniqueElements.isEmpty || indexes.contains(where: \.isUnique)
    }

    var typeName: String { schema.typeName }

    /// `column` qualified by the table: what `ORDER BY` must name, since a bare name there means
    /// the select list's output column of that name, which is text for a column read as text.
    func qualified(_ column: ColumnMapping) -> String { "\(table).\(column.quotedName)" }

    /// The column of the property `name`, or `nil` when the model has none of that name.
    func column(named name: String) -> ColumnMapping? {
        columnIndexes[name].map { columns[$0] }
    }

    /// What the metadata table keeps for the type: its properties and kinds in order, and the key.
    var schemaDescription: String {
        let properties = schema.properties.map { "\($0.name): \($0.kind)" }.joined(separator: ", ")
        return "\(schema.typeName)(\(properties)) primaryKey \(primaryKey.property)"
    }

    /// `CREATE TABLE` for a new table, without its indexes and foreign keys.
    var createStatement: String {
        var definitions = columns.map { column in
            // Strings in the "C" collation: code point order, which a text key's index then
            // serves for primary-key order too.
            let collation = column.sqlType == "text" ? " COLLATE \"C\"" : ""
            return column.quotedName + " " + column.sqlType + collation + (column.isNullable ? "" : " NOT NULL")
        }
        definitions.append("PRIMARY KEY (\(primaryKey.quotedName))")
        return "CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))"
    }

    /// `CREATE INDEX IF NOT EXISTS` for each index the model asks for but the unique ones, which
    /// are constraints (``uniqueConstraintStatement(_:)``), and those named in `existing`.
    func indexStatements(missingFrom existing: Set<String>) -> [String] {
        indexes.filter { !$0.isUnique && !existing.contains($0.name) }.map { index in
            let method = index.method.map { " USING \($0)" } ?? ""
            return "CREATE INDEX IF NOT EXISTS \(SQL.identifier(index.name)) ON \(table)\(method) (\(index.expressions.joined(separator: ", ")))"
        }
    }

    /// The constraint that keeps a unique `index`, checked at `COMMIT` on what the transaction
    /// leaves, as the file store checks its unique indexes when a block commits: a block may give
    /// one object a value before it takes it from another. An exclusion constraint with `=`,
    /// since a unique constraint takes no expressions (strings are unique by their NFC form);
    /// its B-tree index, named as the constraint, serves queries as a unique index would. Upserts
    /// still name the primary key, which is not deferrable, as their `ON CONFLICT` arbiter.
    func uniqueConstraintStatement(_ index: SQLIndex) -> String {
        let elements = index.expressions.map { "\($0) WITH =" }.joined(separator: ", ")
        return "ALTER TABLE \(table) ADD CONSTRAINT \(SQL.identifier(index.name)) EXCLUDE USING btree (\(elements)) DEFERRABLE INITIALLY DEFERRED"
    }

    /// The foreign keys of the table's links, deferred to commit so that a transaction may add a
    /// model before the one it links to; deleting a target sets the link to `NULL`, which reads
    /// as `nil`, as the file store's links do.
    func foreignKeyStatements(tables: [String: TableMapping]) -> [String] {
        columns.compactMap { column in
            guard case .link(let target, _) = column.storage, let targetTable = tables[target] else { return nil }
            let name = SQL.shortName("mirrorstore_fk", typeName, column.property)
            return "ALTER TABLE \(table) ADD CONSTRAINT \(SQL.identifier(name)) FOREIGN KEY (\(column.quotedName)) REFERENCES \(targetTable.table) (\(targetTable.primaryKey.quotedName)) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED"
        }
    }
}

/// One SQL index of a table.
struct SQLIndex: Sendable {
    let name: String
    /// `name` or `name+team`, as `StoreError.uniqueViolation` names it.
    let property: String
    let expressions: [String]
    let isUnique: Bool
    /// `gin` for arrays, which `contains` reads (`@>`); the default B-tree otherwise.
    var method: String?
}

/// The tables of a store's model types, and the schemas of the models embedded in them.
struct DatabaseMapping: Sendable {
    let models: BackendModels
    /// By stored type name.
    let tables: [String: TableMapping]
    /// Unique constraint or index name → (type name, property), to name a unique violation.
    let uniqueIndexes: [String: (typeName: String, property: String)]
    /// The links deletes follow or that forbid them.
    let deleteRules: DeleteRuleLinks
    /// Whether a model declares `LinkingObjects`, which reads then fill.
    let hasInverses: Bool
    /// The tables looked up by Swift type so far.
    private let tablesByType = TablesByType()

    /// Tables by Swift type, filled as types are asked for.
    private final class TablesByType: Sendable {
        let known = Mutex<[ObjectIdentifier: TableMapping]>([:])
    }

    /// Maps `models` and the types they reach; every type listed must have a primary key.
    init(models modelTypes: [any Persistable.Type]) throws {
        let models = try BackendModels(models: modelTypes)
        self.models = models
        for type in modelTypes {
            guard let schema = models.type(of: type)?.schema else { continue }
            if schema.primaryKey == nil { throw StoreError(.noPrimaryKey(typeName: schema.typeName)) }
        }
        var tables: [String: TableMapping] = [:]
        var unique: [String: (typeName: String, property: String)] = [:]
        for type in models.types where type.schema.primaryKey != nil {
            let table = try Self.table(for: type, models: models)
            tables[table.typeName] = table
            for index in table.indexes where index.isUnique { unique[index.name] = (table.typeName, index.property) }
            for elements in table.uniqueElements { unique[elements.indexName] = (table.typeName, elements.property) }
        }
        self.tables = tables
        uniqueIndexes = unique
        deleteRules = DeleteRuleLinks(models: models, tables: tables)
        hasInverses = tables.values.contains { !$0.inverses.isEmpty }
    }

    func table(named typeName: String) throws -> TableMapping {
        guard let table = tables[typeName] else { throw StoreError(.unknownModel(typeName: typeName)) }
        return table
    }

    /// The table of the Swift type `type`, found by name once: `persistedTypeName` spells the
    /// type's name each time it is asked.
    func table<Model: Persistable>(for type: Model.Type) throws -> TableMapping {
        let id = ObjectIdentifier(type)
        if let known = tablesByType.known.withLock({ $0[id] }) { return known }
        let table = try table(named: Model.persistedTypeName)
        tablesByType.known.withLock { $0[id] = table }
        return table
    }

    private static func table(for type: BackendModels.ModelType, models: BackendModels) throws -> TableMapping {
        let schema = type.schema
        guard SQL.isValidIdentifier(schema.typeName) else {
            throw PostgresStoreError(.unsupportedModel(typeName: schema.typeName, reason: "its stored name is longer than PostgreSQL's 63 bytes for an identifier; give it a shorter persistedTypeName"))
        }
        var columns: [ColumnMapping] = []
        for (position, property) in schema.properties.enumerated() {
            guard SQL.isValidIdentifier(property.name) else {
                throw PostgresStoreError(.unsupportedProperty(typeName: schema.typeName, property: property.name, kind: property.kind.description, reason: "its name is longer than PostgreSQL's 63 bytes for an identifier"))
            }
            var kind = property.kind
            var isNullable = false
            if case .optional(let wrapped) = kind { kind = wrapped; isNullable = true }
            let storage = try Self.storage(of: kind, typeName: schema.typeName, property: property, models: models)
            // A link is NULL once its target is deleted, whatever the property's optionality.
            if case .link = storage { isNullable = true }
            var embeddedLinks: Set<String> = []
            if case .json = storage {
                try Self.embeddedLinks(in: kind, models: models, unsupported: { reason in
                    PostgresStoreError(.unsupportedProperty(typeName: schema.typeName, property: property.name, kind: property.kind.description, reason: reason))
                }, into: &embeddedLinks)
            }
            columns.append(ColumnMapping(
                property: property.name, position: position, kind: property.kind, storage: storage,
                isNullable: isNullable, isPrimaryKey: property.isPrimaryKey, embeddedLinkTargets: embeddedLinks.sorted()))
        }
        guard let primaryKey = columns.first(where: \.isPrimaryKey), case .scalar = primaryKey.storage else {
            throw PostgresStoreError(.unsupportedModel(typeName: schema.typeName, reason: "it has no primary key of a single value"))
        }
        var indexes: [SQLIndex] = []
        let uniqueProperties = Set(type.uniqueProperties)
        func expression(_ name: String) -> String? {
            guard let column = columns.first(where: { $0.property == name }) else { return nil }
            // Strings are indexed by their NFC form, which is what the queries compare and what
            // makes canonically equivalent strings one value, as Swift's `==` makes them.
            // In the "C" collation, code point order: the order queries compare and sort in.
            if case .scalar(.text) = column.storage { return "(normalize(\(column.quotedName), NFC) COLLATE \"C\")" }
            return column.quotedName
        }
        var uniqueElements: [UniqueElements] = []
        for column in columns where !column.isPrimaryKey {
            let isUnique = uniqueProperties.contains(column.property)
            let isIndexed = schema.property(named: column.property)?.isIndexed ?? false
            let isLink = column.linkTarget != nil
            guard isIndexed || isUnique || isLink, case .some(let indexed) = expression(column.property) else { continue }
            if isUnique, let unique = UniqueElements(column: column, typeName: schema.typeName, table: SQL.identifier(schema.typeName), primaryKey: primaryKey) {
                uniqueElements.append(unique)
            }
            if case .json = column.storage { continue }
            switch column.storage {
            case .array, .linkArray:
                // Unique or not, the GIN index serves `contains`; uniqueness is the side table's.
                indexes.append(SQLIndex(
                    name: SQL.shortName("mirrorstore_ix", schema.typeName, column.property),
                    property: column.property, expressions: [column.quotedName], isUnique: false, method: "gin"))
                continue
            default: break
            }
            indexes.append(SQLIndex(
                name: SQL.shortName(isUnique ? "mirrorstore_ux" : "mirrorstore_ix", schema.typeName, column.property),
                property: column.property, expressions: [indexed], isUnique: isUnique))
        }
        for compound in type.compoundIndexes {
            let expressions = compound.properties.compactMap(expression)
            guard expressions.count == compound.properties.count else { continue }
            indexes.append(SQLIndex(
                name: SQL.shortName(compound.isUnique ? "mirrorstore_ux" : "mirrorstore_ix", schema.typeName, compound.description),
                property: compound.description, expressions: expressions, isUnique: compound.isUnique))
        }
        return TableMapping(
            schema: schema, columns: columns, primaryKey: primaryKey, indexes: indexes, uniqueElements: uniqueElements,
            inverses: models.inverses(of: schema.typeName))
    }

    static func storage(of kind: PropertyKind, typeName: String, property: ObjectSchema.Property, models: BackendModels) throws -> ColumnStorage {
        func unsupported(_ reason: String) -> PostgresStoreError {
            PostgresStoreError(.unsupportedProperty(typeName: typeName, property: property.name, kind: property.kind.description, reason: reason))
        }
        if let scalar = ScalarType(kind) { return .scalar(scalar) }
        switch kind {
        case .object(let target):
            guard let targetSchema = models.type(named: target)?.schema else { throw unsupported("\(target) is not a model type") }
            if let key = targetSchema.primaryKey {
                guard let keyKind = targetSchema.property(named: key)?.kind, let keyType = ScalarType(keyKind) else {
                    throw unsupported("\(target)'s primary key is not a single value")
                }
                return .link(targetTypeName: target, key: keyType)
            }
            return .json
        case .list(let element), .set(let element):
            if let scalar = ScalarType(element), scalar.hasNativeArray { return .array(scalar) }
            if let links = try linkArray(of: element, models: models, unsupported: unsupported) { return links }
            return .json
        case .dictionary:
            return .json
        default:
            throw unsupported("optionals of optionals are not stored yet")
        }
    }

    /// The storage of a container whose elements are `element`, when they are links (`Pet` or
    /// `Pet?` for a model `Pet` with a primary key); `nil` for other elements.
    private static func linkArray(
        of element: PropertyKind, models: BackendModels, unsupported: (String) -> PostgresStoreError
    ) throws -> ColumnStorage? {
        var target = element
        var elementsOptional = false
        if case .optional(let wrapped) = target { target = wrapped; elementsOptional = true }
        guard case .object(let typeName) = target, let schema = models.type(named: typeName)?.schema,
              let key = schema.primaryKey else { return nil }
        guard let keyKind = schema.property(named: key)?.kind, let keyType = ScalarType(keyKind), KeyArrayText.supports(keyType) else {
            throw unsupported("links inside containers are kept as arrays of \(typeName)'s keys, which must be integers, strings or UUIDs")
        }
        return .linkArray(targetTypeName: typeName, key: keyType, elementsOptional: elementsOptional)
    }

    /// Adds to `targets` the models with a primary key that `kind`, kept as `jsonb`, links to at
    /// any depth (their keys are stored in the `jsonb`); throws for an optional of an optional,
    /// which the `jsonb` encoding cannot tell apart, and for a target whose key is not a single
    /// value.
    private static func embeddedLinks(
        in kind: PropertyKind, models: BackendModels, unsupported: (String) -> PostgresStoreError,
        into targets: inout Set<String>, seen: Set<String> = []
    ) throws {
        switch kind {
        case .object(let target):
            guard !seen.contains(target) else { return }
            guard let schema = models.type(named: target)?.schema else { throw unsupported("\(target) is not a model type") }
            if let key = schema.primaryKey {
                guard let keyKind = schema.property(named: key)?.kind, ScalarType(keyKind) != nil else {
                    throw unsupported("\(target)'s primary key is not a single value")
                }
                targets.insert(target)
                return
            }
            for inner in schema.properties {
                try embeddedLinks(in: inner.kind, models: models, unsupported: unsupported, into: &targets, seen: seen.union([target]))
            }
        case .optional(.optional):
            throw unsupported("optionals of optionals are not stored yet")
        case .list(let inner), .set(let inner), .dictionary(let inner), .optional(let inner):
            try embeddedLinks(in: inner, models: models, unsupported: unsupported, into: &targets, seen: seen)
        default:
            return
        }
    }
}

/// Spelling SQL: identifiers are always quoted; values never appear in SQL text.
enum SQL {
    /// `name` as a quoted identifier: `"Hero"`, with quotes doubled.
    static func identifier(_ name: String) -> String {
        // Queries spell column names on every call: most names hold no quote, and Foundation's
        // replacing would cost a query more than the rest of its SQL.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether PostgreSQL keeps `name` whole as an identifier (it cuts names past 63 bytes).
    static func isValidIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 63 && !name.utf8.contains(0)
    }

    /// A constraint or index name under 63 bytes for `typeName` and `property`: a prefix and a
    /// hash of both (FNV-1a, stable across runs and platforms).
    static func shortName(_ prefix: String, _ typeName: String, _ property: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in typeName.utf8 + [0] + property.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return prefix + "_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
