import MirrorStore
import PostgresNIO

/// A table as the database holds it before a migration: its columns, the schema they were
/// written from, and how a row of it reads as a record of that schema (an enumeration's `old`).
struct StoredTable {
    /// One stored column, read as the old schema's property at the same position.
    struct Column {
        /// The column's name, its property's name in the old schema.
        let name: String
        /// How a cell of it is read: the old property's kind and storage.
        let reading: ColumnMapping
        /// What selects it from the table's copy, aliased `o`.
        let expression: String
    }

    let typeName: String
    let columns: [Column]
    let schema: ObjectSchema
    /// Per stored type, a schema of its primary key alone: what old links are records of.
    let keySchemas: [String: ObjectSchema]
    /// The embedded models' schemas as the table was written with them (its metadata's
    /// ``EmbeddedLayouts``), which its `jsonb` values are read by; empty when not known.
    let embeddedSchemas: [String: ObjectSchema]
    /// Whether the metadata records the embedded layouts (`NULL` in a row written before they
    /// were kept): when not, the table is taken to hold the models' layouts.
    let knowsEmbeddedLayouts: Bool
    /// The embedded models the table's own properties hold, by the names its schema description
    /// spells (links to stored tables left out): all a row without embedded layouts says of them.
    let describedEmbeddedTypes: Set<String>

    /// Every table the metadata table names, by type name: one query, before the block runs,
    /// so that `oldSchema(ofType:)` can answer without the server.
    static func all(
        descriptions: [String: String], layouts: [String: EmbeddedLayouts], mapping: DatabaseMapping, on connection: PostgresConnection,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [String: StoredTable] {
        let rows = try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT m.type_name, a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull
                FROM \(SQL.identifier(SchemaSetup.metadataTable)) m
                JOIN pg_attribute a ON a.attrelid = to_regclass(quote_ident(m.type_name))
                WHERE a.attnum > 0 AND NOT a.attisdropped ORDER BY m.type_name, a.attnum
                """), logger: PostgresStore.logger).collect()
        }
        var columns: [String: [(name: String, type: String, notNull: Bool)]] = [:]
        for row in rows {
            let (typeName, name, type, notNull) = try row.decode((String, String, String, Bool).self)
            columns[typeName, default: []].append((name, type, notNull))
        }
        let candidates = kindCandidates(mapping)
        var keySchemas: [String: ObjectSchema] = [:]
        for (typeName, stored) in columns {
            let (described, primaryKey) = parse(descriptions[typeName] ?? "", typeName: typeName)
            guard let primaryKey, let column = stored.first(where: { $0.name == primaryKey }) else { continue }
            var kind = kind(ofSQLType: column.type).0
            if let found = described[primaryKey].flatMap({ candidates[$0] }), ScalarType(found) != nil { kind = found }
            keySchemas[typeName] = ObjectSchema(typeName: typeName, properties: [ObjectSchema.Property(name: primaryKey, kind: kind, isPrimaryKey: true)])
        }
        return columns.reduce(into: [:]) { tables, entry in
            tables[entry.key] = StoredTable(
                typeName: entry.key, columns: entry.value, description: descriptions[entry.key] ?? "", mapping: mapping, candidates: candidates,
                keySchemas: keySchemas, embeddedSchemas: layouts[entry.key]?.schemas ?? [:], knowsEmbeddedLayouts: layouts[entry.key] != nil)
        }
    }

    private init(
        typeName: String, columns stored: [(name: String, type: String, notNull: Bool)], description: String, mapping: DatabaseMapping,
        candidates: [String: PropertyKind], keySchemas: [String: ObjectSchema], embeddedSchemas: [String: ObjectSchema], knowsEmbeddedLayouts: Bool
    ) {
        self.typeName = typeName
        self.keySchemas = keySchemas
        self.embeddedSchemas = embeddedSchemas
        self.knowsEmbeddedLayouts = knowsEmbeddedLayouts
        let (described, primaryKey) = Self.parse(description, typeName: typeName)
        describedEmbeddedTypes = Self.modelNames(in: described.values.compactMap(KindSpelling.kind(of:))).subtracting(keySchemas.keys)
        var columns: [Column] = []
        var properties: [ObjectSchema.Property] = []
        for (position, column) in stored.enumerated() {
            var kind: PropertyKind
            let reading: ColumnMapping
            let expression: String
            if let text = described[column.name], let found = candidates[text] ?? KindSpelling.kind(of: text),
               let mapped = Self.column(
                   column.name, position: position, kind: found, sqlType: column.type, typeName: typeName, mapping: mapping, embeddedSchemas: embeddedSchemas) {
                kind = found
                reading = mapped
                expression = mapped.selectExpression(table: "o")
            } else if let text = described[column.name], let target = keySchemas[text.hasSuffix("?") ? String(text.dropLast()) : text],
                      case .scalar(let key) = Self.kind(ofSQLType: column.type).1 {
                // A link to a stored type no model has by that name (one renamed, say).
                kind = .object(typeName: target.typeName)
                reading = ColumnMapping(
                    property: column.name, position: position, kind: kind, storage: .link(targetTypeName: target.typeName, key: key),
                    isNullable: true, isPrimaryKey: false)
                expression = reading.selectExpression(table: "o")
            } else {
                // The metadata does not say the kind (or says one no model has now): the SQL
                // type does, and anything else is read as its text.
                let (fallback, storage) = Self.kind(ofSQLType: column.type)
                kind = fallback
                reading = ColumnMapping(property: column.name, position: position, kind: kind, storage: storage, isNullable: true, isPrimaryKey: false)
                expression = reading.sqlType == column.type ? reading.selectExpression(table: "o") : "o.\(SQL.identifier(column.name))::text"
            }
            // A column without NOT NULL may hold NULL (a link whose target is gone, say).
            if !column.notNull, !kind.isOptional { kind = .optional(kind) }
            properties.append(ObjectSchema.Property(name: column.name, kind: kind, isPrimaryKey: column.name == primaryKey))
            columns.append(Column(name: column.name, reading: reading, expression: expression))
        }
        self.columns = columns
        schema = ObjectSchema(typeName: typeName, properties: properties)
    }

    /// The model type names `kinds` name, at any depth of containers and optionals.
    private static func modelNames(in kinds: [PropertyKind]) -> Set<String> {
        var names: Set<String> = []
        var pending = kinds
        while let kind = pending.popLast() {
            switch kind {
            case .optional(let inner), .list(let inner), .set(let inner), .dictionary(let inner): pending.append(inner)
            case .object(let typeName): names.insert(typeName)
            default: continue
            }
        }
        return names
    }

    /// The property kinds a description may name, by their spelling: single values, and every
    /// kind the models use.
    private static func kindCandidates(_ mapping: DatabaseMapping) -> [String: PropertyKind] {
        var kinds: [PropertyKind] = [
            .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
            .float, .double, .string, .data, .date, .uuid, .decimal, .url,
        ]
        for table in mapping.tables.values { kinds += table.schema.properties.map(\.kind) }
        var candidates: [String: PropertyKind] = [:]
        for kind in kinds {
            candidates[kind.description] = kind
            candidates[PropertyKind.optional(kind).description] = .optional(kind)
        }
        return candidates
    }

    /// Property names to kind spellings, and the primary key, from a schema description
    /// `Type(id: Int, name: String?) primaryKey id`; empty for any other text.
    private static func parse(_ description: String, typeName: String) -> (kinds: [String: String], primaryKey: String?) {
        let prefix = typeName + "("
        guard description.hasPrefix(prefix), let end = description.range(of: ") primaryKey ", options: .backwards) else { return ([:], nil) }
        let list = description[description.index(description.startIndex, offsetBy: prefix.count)..<end.lowerBound]
        var kinds: [String: String] = [:]
        // No kind's spelling holds ", ": it separates properties.
        for property in list.components(separatedBy: ", ") {
            guard let colon = property.range(of: ": ") else { continue }
            kinds[String(property[..<colon.lowerBound])] = String(property[colon.upperBound...])
        }
        return (kinds, String(description[end.upperBound...]))
    }

    /// The reading of a column of `kind`, when the table stores that kind as `sqlType`.
    /// `embeddedSchemas`: the embedded models as the table was written with them, which may
    /// no longer be models of those names (renamed).
    private static func column(
        _ name: String, position: Int, kind: PropertyKind, sqlType: String, typeName: String, mapping: DatabaseMapping,
        embeddedSchemas: [String: ObjectSchema]
    ) -> ColumnMapping? {
        var wrapped = kind
        if case .optional(let inner) = kind { wrapped = inner }
        let property = ObjectSchema.Property(name: name, kind: kind)
        let storage: ColumnStorage
        if case .object(let target) = wrapped, mapping.models.type(named: target) == nil, embeddedSchemas[target] != nil {
            storage = .json
        } else if let found = try? DatabaseMapping.storage(of: wrapped, typeName: typeName, property: property, models: mapping.models) {
            storage = found
        } else {
            return nil
        }
        let column = ColumnMapping(property: name, position: position, kind: kind, storage: storage, isNullable: true, isPrimaryKey: false)
        // A link is read as a record of its target's model: one the store opens with.
        if let target = column.linkTarget, mapping.tables[target] == nil { return nil }
        if column.sqlType == sqlType { return column }
        // Arrays and sets of `Data` as an earlier version kept them (`DataArrayConversion`).
        if sqlType == "jsonb", DataArrayConversion.isDataArray(kind) {
            return ColumnMapping(property: name, position: position, kind: kind, storage: .json, isNullable: true, isPrimaryKey: false)
        }
        return nil
    }

    /// A kind and storage for a column the metadata does not describe: the single value or
    /// native array its SQL type holds, or a string for any other (read as its text).
    private static func kind(ofSQLType sqlType: String) -> (PropertyKind, ColumnStorage) {
        let kinds: [PropertyKind] = [.bool, .int, .uint64, .float, .double, .string, .data, .uuid, .decimal]
        for kind in kinds {
            guard let scalar = ScalarType(kind) else { continue }
            if scalar.sqlType == sqlType { return (kind, .scalar(scalar)) }
            if scalar.hasNativeArray, scalar.sqlType + "[]" == sqlType { return (.list(kind), .array(scalar)) }
        }
        return (.string, .scalar(.text))
    }

    /// The old record of a row whose cells from `offset` on are this table's columns, in
    /// order; links read as records of the stored target type holding only its primary key.
    func record(_ row: PostgresRandomAccessRow, from offset: Int, mapping: DatabaseMapping, key: () -> String) throws -> ManagedObject {
        let coding = ColumnCoding(models: mapping.models, typeName: typeName)
        let record = ManagedObject(objectSchema: schema)
        for (index, column) in columns.enumerated() {
            let value: RecordValue
            if case .json = column.reading.storage, !embeddedSchemas.isEmpty {
                // Embedded models as they were stored, which their models may no longer be.
                let decoding = JSONCoding(models: mapping.models, typeName: typeName, property: column.name, embeddedSchemas: embeddedSchemas)
                value = try coding.json(row[offset + index], column: column.reading, key: key).map { try decoding.decode($0, kind: column.reading.kind) } ?? .null
            } else {
                value = try KeyRecords.replacingKeys(
                    in: try coding.read(row[offset + index], column: column.reading, key: key), column: column.reading,
                    schemaOf: { keySchemas[$0] ?? mapping.tables[$0]?.schema })
            }
            // Properties start as `nil`.
            if value != .null { try record.setValue(value, forPropertyAt: index) }
        }
        return record
    }
}
