import Foundation

/// Searching and sorting strings ignoring case and diacritics, on Linux as on Apple platforms.
///
/// ```swift
/// final class Person: Persistable {
///     var id = 0
///     var name = ""
///     init() {}
///     static var primaryKey: String? { "id" }
///     static var insensitiveIndexedProperties: [String] { ["name"] }
/// }
/// let people = try store.objects(Person.self)
/// let elodies = try people.filter(\.name, .equals("elodie"))      // "Élodie", "ELODIE", "E\u{301}lodie"
/// let elo = try people.filter(\.name, .startsWith("ÉLO"))          // read from the index of folded names
/// let lod = try people.filter(\.name, .contains("lod"), options: .caseInsensitive)
/// let byName = try people.sorted(by: \.name)                         // "Élodie" beside "elodie", before "zz"
/// ```
///
/// Both sides are folded (``TextOptions``) and then compared as `String` compares them; a
/// property listed in ``Persistable/insensitiveIndexedProperties`` has an index of its folded
/// values, which answers equality and prefixes with ``TextOptions/insensitive`` and orders an
/// insensitive sort.
extension Results {
    /// The results whose `property` matches `match`, ignoring what `options` say.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func filter(_ property: KeyPath<Model, String>, _ match: TextMatch, options: TextOptions = .insensitive) throws -> Results<Model> {
        try filter(textProperty: property, match, options: options)
    }

    /// The results whose `property` is not `nil` and matches `match`, ignoring what `options` say.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func filter(_ property: KeyPath<Model, String?>, _ match: TextMatch, options: TextOptions = .insensitive) throws -> Results<Model> {
        try filter(textProperty: property, match, options: options)
    }

    /// The results sorted by `property` folded as `options` say: `"Élodie"` beside `"elodie"`.
    /// Equal folded values keep the order they had.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func sorted(by property: KeyPath<Model, String>, options: TextOptions = .insensitive, order: SortOrder = .forward) throws -> Results<Model> {
        try sorted(textProperty: property, options: options, order: order)
    }

    /// The results sorted by `property` folded as `options` say, `nil` first.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func sorted(by property: KeyPath<Model, String?>, options: TextOptions = .insensitive, order: SortOrder = .forward) throws -> Results<Model> {
        try sorted(textProperty: property, options: options, order: order)
    }

    private func filter<Value>(textProperty property: KeyPath<Model, Value>, _ match: TextMatch, options: TextOptions) throws -> Results<Model> {
        let (name, position) = try storedProperty(property)
        let root = PredicateExpressions.Variable<Model>().key
        let value = QueryNode.folded(.member(.variable(root), property: name, position: position, typeName: source.schema.typeName), options)
        let node: QueryNode = switch match {
        case .equals(let text): .equal(value, .constant(.string(TextFolding.folded(text, options: options))))
        case .startsWith(let text): .startsWith(value, .constant(.string(TextFolding.folded(text, options: options))))
        case .contains(let text): .containsText(value, .constant(.string(TextFolding.folded(text, options: options))))
        }
        return try filter(QueryCondition(node: node, root: root))
    }

    private func sorted<Value>(textProperty property: KeyPath<Model, Value>, options: TextOptions, order: SortOrder) throws -> Results<Model> {
        let (name, position) = try storedProperty(property)
        var key = RecordSortKey(property: name, reading: .stored(position: position), kind: source.schema.properties[position].kind,
                                ascending: order == .forward, stringComparator: nil)
        key.folding = options
        return try sorted(folded: key)
    }
}
