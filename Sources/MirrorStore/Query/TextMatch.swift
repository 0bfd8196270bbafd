/// A condition on a string property that can ignore case and diacritics: see
/// ``Results/filter(_:_:options:)-(KeyPath<Model,String>,_,_)``.
///
/// ```swift
/// let found = try people.filter(\.name, .startsWith("élo"))   // "Élodie", "ELODIE", "elodie"
/// ```
public enum TextMatch: Sendable, Equatable {
    /// The whole string equals the text.
    case equals(String)
    /// The string starts with the text.
    case startsWith(String)
    /// The string contains the text (every string contains the empty text).
    case contains(String)
}

/// What a ``TextMatch`` or an insensitive sort ignores when it compares strings.
///
/// Case is ignored by Unicode case folding (`"ß"` matches `"SS"`, `"İ"` matches `"i"`), and
/// diacritics by canonical decomposition with the combining marks removed (`"É"` matches `"E"`),
/// as Foundation's `folding(options:locale:)` does without a locale; the strings are then
/// compared as `String` compares them.
public struct TextOptions: OptionSet, Sendable, Hashable {
    /// The options as bits: 1 for ``caseInsensitive``, 2 for ``diacriticInsensitive``.
    public let rawValue: Int

    /// Creates options from their raw value.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Upper and lower case compare equal.
    public static let caseInsensitive = TextOptions(rawValue: 1 << 0)
    /// Letters with and without accents and other diacritics compare equal.
    public static let diacriticInsensitive = TextOptions(rawValue: 1 << 1)
    /// Both: what ``Persistable/insensitiveIndexedProperties`` index.
    public static let insensitive: TextOptions = [.caseInsensitive, .diacriticInsensitive]
}
