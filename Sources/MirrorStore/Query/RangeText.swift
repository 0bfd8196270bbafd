import MirrorStoreEngine

/// What the conditions on one indexed property say, kept as values and put into words only
/// when a plan is read: describing a string key escapes it character by character, which cost
/// a lookup by an indexed value as much as the lookup itself.
struct RangeText: Sendable, Equatable, CustomStringConvertible {
    enum Term: Sendable, Equatable {
        case equal(IndexKey)
        case lessThan(IndexKey)
        case lessThanOrEqual(IndexKey)
        case greaterThan(IndexKey)
        case greaterThanOrEqual(IndexKey)
        case within(IndexKey, IndexKey, isClosed: Bool)
        case startsWith(String)
        case contains(IndexKey)
        /// What the conditions on one property of a compound index say.
        indirect case component(property: String, RangeText)
        /// A to-one link reads `nil` (or, with `false`, an object): see ``LinkPresence``.
        case linkIsNil(Bool)
    }

    /// The first term apart from the rest: most ranges have one, and a list of one is one more
    /// object made per query.
    private let first: Term
    private var rest: [Term] = []

    init(_ term: Term) {
        first = term
    }

    var terms: [Term] { [first] + rest }

    /// Both ranges' terms, for conditions that must both hold.
    mutating func append(_ other: RangeText) {
        rest.append(other.first)
        rest += other.rest
    }

    /// One more term, for a condition that must also hold.
    mutating func append(_ term: Term) {
        rest.append(term)
    }

    /// The terms joined by "and": `>= 3 and < 9`.
    var description: String {
        terms.map { term in
            switch term {
            case .equal(let key): "== \(key)"
            case .lessThan(let key): "< \(key)"
            case .lessThanOrEqual(let key): "<= \(key)"
            case .greaterThan(let key): "> \(key)"
            case .greaterThanOrEqual(let key): ">= \(key)"
            case .within(let lower, let upper, let isClosed): "in \(lower)\(isClosed ? "..." : "..<")\(upper)"
            case .startsWith(let prefix): "starts with \(prefix.debugDescription)"
            case .contains(let key): "contains \(key)"
            case .component(let property, let text): "\(property) \(text)"
            case .linkIsNil(let isNil): isNil ? "== nil" : "!= nil"
            }
        }.joined(separator: " and ")
    }
}
