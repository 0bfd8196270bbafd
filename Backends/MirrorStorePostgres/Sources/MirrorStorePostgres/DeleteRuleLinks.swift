import MirrorStore

/// The models' delete rules as columns: which links a delete follows (`.cascade`) and which
/// forbid it (`.deny`). `.nullify` needs nothing: a single link's foreign key sets it to `NULL`,
/// and a key in an array of links whose target is gone is dropped on read.
struct DeleteRuleLinks: Sendable {
    /// One link column with a rule.
    struct Link: Sendable {
        let source: TableMapping
        let column: ColumnMapping
        let target: String
    }

    /// Per source type, its links whose targets go with it.
    let cascades: [String: [Link]]
    /// Per target type, the links that forbid deleting it.
    let denials: [String: [Link]]

    /// The rules of `models` on the columns of `tables`. `BackendModels` has checked each rule is
    /// on a link to a model with a primary key, which every such link's column is.
    init(models: BackendModels, tables: [String: TableMapping]) {
        var cascades: [String: [Link]] = [:]
        var denials: [String: [Link]] = [:]
        for type in models.types {
            guard let table = tables[type.schema.typeName] else { continue }
            for (property, rule) in type.deleteRules.sorted(by: { $0.key < $1.key }) {
                guard let column = table.column(named: property), let target = column.linkTarget else { continue }
                let link = Link(source: table, column: column, target: target)
                switch rule {
                case .nullify: continue
                case .cascade: cascades[table.typeName, default: []].append(link)
                case .deny: denials[target, default: []].append(link)
                }
            }
        }
        self.cascades = cascades
        // In the order `StoreError.deleteDenied` names them by: source type name, then property.
        self.denials = denials.mapValues { links in
            links.sorted { ($0.source.typeName, $0.column.property) < ($1.source.typeName, $1.column.property) }
        }
    }

    /// Whether deleting objects of `typeName` may do more than remove them.
    func apply(toDeleting typeName: String) -> Bool {
        cascades[typeName] != nil || denials[typeName] != nil
    }
}
