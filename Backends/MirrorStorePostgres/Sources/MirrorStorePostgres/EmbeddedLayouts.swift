import MirrorStore

/// The property layouts of the embedded models a table's `jsonb` values hold, by type name:
/// what `mirrorstore_metadata.embedded_schemas` keeps per table, so that opening sees a change of
/// an embedded model's own properties, which the table's schema description (naming the model,
/// not its properties) does not show.
///
/// The text is one line per embedded model the table reaches through its properties and those
/// of its embedded models (not through links), sorted by type name, each spelled as a schema
/// description without a key: `Address(street: String, city: City?)`; empty when it embeds none.
struct EmbeddedLayouts: Equatable {
    /// By embedded type name.
    let schemas: [String: ObjectSchema]

    /// The layouts of the embedded models `table`'s model reaches, as the models declare them.
    init(of table: TableMapping, models: BackendModels) {
        var schemas: [String: ObjectSchema] = [:]
        var pending = table.schema.properties.map(\.kind)
        while let kind = pending.popLast() {
            switch kind {
            case .optional(let inner), .list(let inner), .set(let inner), .dictionary(let inner):
                pending.append(inner)
            case .object(let typeName):
                guard schemas[typeName] == nil, let schema = models.type(named: typeName)?.schema, schema.primaryKey == nil else { continue }
                schemas[typeName] = schema
                pending += schema.properties.map(\.kind)
            default:
                continue
            }
        }
        self.schemas = schemas
    }

    /// The layouts `text` spells, or `nil` when it spells none (a row written before layouts
    /// were kept holds `NULL`; other text is read the same way: the layout is not known).
    init?(text: String?) {
        guard let text else { return nil }
        var schemas: [String: ObjectSchema] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let open = line.firstIndex(of: "("), line.hasSuffix(")") else { return nil }
            let typeName = String(line[..<open])
            let list = line[line.index(after: open)..<line.index(before: line.endIndex)]
            var properties: [ObjectSchema.Property] = []
            // No kind's spelling holds ", ": it separates properties.
            for property in list.components(separatedBy: ", ") where !property.isEmpty {
                guard let colon = property.range(of: ": "), let kind = KindSpelling.kind(of: String(property[colon.upperBound...])) else { return nil }
                properties.append(ObjectSchema.Property(name: String(property[..<colon.lowerBound]), kind: kind))
            }
            guard !typeName.isEmpty, schemas[typeName] == nil else { return nil }
            schemas[typeName] = ObjectSchema(typeName: typeName, properties: properties)
        }
        self.schemas = schemas
    }

    /// The text the metadata keeps.
    var text: String {
        schemas.keys.sorted().compactMap { schemas[$0].map(Self.text(of:)) }.joined(separator: "\n")
    }

    static func == (lhs: EmbeddedLayouts, rhs: EmbeddedLayouts) -> Bool { lhs.text == rhs.text }

    /// One sentence per embedded model whose layout differs in `model`, for
    /// `StoreError.schemaChanged`.
    func differences(to model: EmbeddedLayouts, in typeName: String) -> [String] {
        model.schemas.keys.sorted().compactMap { name in
            guard let stored = schemas[name].map(Self.text(of:)), let current = model.schemas[name].map(Self.text(of:)), stored != current else { return nil }
            return "\(typeName) embeds \(name), stored as \(stored), and the model is \(current)"
        }
    }

    /// One model's layout as the metadata spells it.
    static func text(of schema: ObjectSchema) -> String {
        "\(schema.typeName)(\(schema.properties.map { "\($0.name): \($0.kind)" }.joined(separator: ", ")))"
    }
}
