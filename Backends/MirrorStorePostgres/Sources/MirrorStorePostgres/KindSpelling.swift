import MirrorStore

/// Reads a property kind back from its Swift spelling (`PropertyKind.description`), as the
/// metadata table's schema descriptions keep it: `Int8`, `[String: [UInt16?]]`, `Set<Int>?`,
/// `Address`. A migration needs the stored kind of a `jsonb` column, which no model may spell
/// any more (`[String: Int32]` when the model now says `[String: Int8]`).
enum KindSpelling {
    /// Containers nested deeper than this are not read: a description is data from the database.
    static let maximumDepth = 32

    private static let scalars: [String: PropertyKind] = {
        let kinds: [PropertyKind] = [
            .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
            .float, .double, .string, .data, .date, .uuid, .decimal, .url,
        ]
        return Dictionary(kinds.map { ($0.description, $0) }, uniquingKeysWith: { first, _ in first })
    }()

    /// The kind `text` spells, or `nil` when it spells none (or nests too deep). A name that is
    /// no value type's is a model type's.
    static func kind(of text: String) -> PropertyKind? {
        var rest = Substring(text)
        guard let kind = parse(&rest, depth: 0), rest.isEmpty else { return nil }
        return kind
    }

    private static func parse(_ text: inout Substring, depth: Int) -> PropertyKind? {
        guard depth < maximumDepth else { return nil }
        var kind: PropertyKind
        if text.hasPrefix("[String: ") {
            text = text.dropFirst("[String: ".count)
            guard let value = parse(&text, depth: depth + 1), text.hasPrefix("]") else { return nil }
            text = text.dropFirst()
            kind = .dictionary(value)
        } else if text.hasPrefix("[") {
            text = text.dropFirst()
            guard let element = parse(&text, depth: depth + 1), text.hasPrefix("]") else { return nil }
            text = text.dropFirst()
            kind = .list(element)
        } else if text.hasPrefix("Set<") {
            text = text.dropFirst("Set<".count)
            guard let element = parse(&text, depth: depth + 1), text.hasPrefix(">") else { return nil }
            text = text.dropFirst()
            kind = .set(element)
        } else {
            let name = text.prefix { $0 != "?" && $0 != "]" && $0 != ">" && $0 != "[" && $0 != "<" && $0 != " " && $0 != "," }
            guard !name.isEmpty else { return nil }
            text = text.dropFirst(name.count)
            kind = scalars[String(name)] ?? .object(typeName: String(name))
        }
        // Swift spells nested optionals `T??`; the store keeps none, but reads them as written.
        var optionals = 0
        while text.hasPrefix("?") {
            guard optionals < maximumDepth else { return nil }
            text = text.dropFirst()
            kind = .optional(kind)
            optionals += 1
        }
        return kind
    }
}
