import MirrorStore

/// The automatic kind changes of a migration inside a `jsonb` column, as the file store makes
/// them without a block: integers of another width or sign at any depth (`[String: Int32]` to
/// `[String: Int8]`, `[UInt16?]` to `[UInt8?]`), arrays becoming sets and back, values becoming
/// optional or no longer. The `jsonb` spelling of every such value is the same under both kinds
/// (integers are their decimal text), so nothing is rewritten: each stored value is checked to
/// fit the new kind, and one that does not refuses the migration, naming it.
struct JSONKindChange {
    let old: PropertyKind
    let new: PropertyKind

    /// The change from `old` to `new`, or `nil` when no automatic rule makes it (the migration
    /// then refuses it unless a block converts it). `renamedTypes`: stored type names to the
    /// names a migration gives them, for links and embedded models inside the value (the
    /// `jsonb` spells neither's type name; an embedded model's own changes are
    /// ``EmbeddedEvolution``'s).
    init?(from old: PropertyKind, to new: PropertyKind, renamedTypes: [String: String]) {
        guard Self.convertible(old, to: new, renamedTypes: renamedTypes, depth: 0) else { return nil }
        self.old = old
        self.new = new
    }

    private static func unwrapped(_ kind: PropertyKind) -> PropertyKind {
        if case .optional(let wrapped) = kind { return unwrapped(wrapped) }
        return kind
    }

    private static func isInteger(_ kind: PropertyKind) -> Bool {
        IntegerConversion.range(of: kind) != nil
    }

    /// `TypeEvolution.convertible`'s rules, on kinds as `jsonb` holds them.
    private static func convertible(_ from: PropertyKind, to: PropertyKind, renamedTypes: [String: String], depth: Int) -> Bool {
        guard depth < KindSpelling.maximumDepth else { return false }
        let from = unwrapped(from), to = unwrapped(to)
        if from == to { return true }
        if isInteger(from) && isInteger(to) { return true }
        switch (from, to) {
        case (.object(let a), .object(let b)):
            return (renamedTypes[a] ?? a) == b
        case (.list(let a), .list(let b)), (.list(let a), .set(let b)), (.set(let a), .list(let b)), (.set(let a), .set(let b)),
             (.dictionary(let a), .dictionary(let b)):
            return convertible(a, to: b, renamedTypes: renamedTypes, depth: depth + 1)
        default:
            return false
        }
    }

    /// The first value in `json`, a value of the old kind, that the new kind cannot hold, as
    /// text (`nil` for an absent value where the new kind needs one); `nil` when all fit.
    func firstMisfit(in json: JSONValue) -> String? {
        Self.misfit(json, to: new, depth: 0)
    }

    private static func misfit(_ json: JSONValue, to kind: PropertyKind, depth: Int) -> String? {
        guard depth < KindSpelling.maximumDepth else { return "a value nested deeper than \(KindSpelling.maximumDepth) levels" }
        if case .null = json { return kind.isOptional ? nil : "nil" }
        switch (unwrapped(kind), json) {
        case (let integer, .string(let text)) where isInteger(integer):
            return fits(text, integer) ? nil : text
        case (.list(let element), .array(let items)), (.set(let element), .array(let items)):
            for item in items {
                if let found = misfit(item, to: element, depth: depth + 1) { return found }
            }
            return nil
        case (.dictionary(let element), .object(let entries)):
            for key in entries.keys.sorted() {
                if let item = entries[key], let found = misfit(item, to: element, depth: depth + 1) { return found }
            }
            return nil
        default:
            // The same kind as stored (a string, an embedded model, a link's key): it fits.
            return nil
        }
    }

    /// Whether the decimal `text` is a value of the integer kind `kind`.
    private static func fits(_ text: String, _ kind: PropertyKind) -> Bool {
        switch kind {
        case .int, .int64: Int64(text) != nil
        case .int8: Int8(text) != nil
        case .int16: Int16(text) != nil
        case .int32: Int32(text) != nil
        case .uint, .uint64: UInt64(text) != nil
        case .uint8: UInt8(text) != nil
        case .uint16: UInt16(text) != nil
        case .uint32: UInt32(text) != nil
        default: false
        }
    }
}
