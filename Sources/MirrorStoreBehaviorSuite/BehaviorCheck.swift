/// One part of the behaviour every ``MirrorStore/ModelStore`` shares, run by
/// ``ModelStoreBehavior/run(_:)``.
public enum BehaviorCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Adds, replaces by key, updates, deletes by key and deletes all, with links saved, and
    /// reads in a block seeing its own writes.
    case writes
    /// Reads by primary key (with links), fetches and counts.
    case reads
    /// Filters, sorts and limits chosen by hand.
    case queries
    /// Seeded random data and queries, compared with `Array.filter` on the same models.
    case modelBasedQueries
    /// A raised schema version with a rename, an added and a removed property, in a model and
    /// in an embedded one (whose parent is unchanged); an embedded model's type renamed, alone
    /// and with a change of its properties; a kind change inside an embedded model converted by
    /// the blocks; refusals of a changed model without a raised
    /// version, of a lower version, and of a migration that throws.
    case migrations
    /// A commit reaches an observer of a query and an observer of an object.
    case observation
    /// An observer of a query that watches key paths, one through a link, sees a change of the
    /// linked object's watched property as a modification, and no element for changes of
    /// properties it does not watch, on the objects or on the linked one; a key path that ends
    /// at a link watches the link (which object), not the linked object's values, and deleting
    /// its target (to-one, or in an array of links) is a modification.
    case watchedObservation
    /// A second object with a unique value is `StoreError.uniqueViolation` and is not written.
    case uniqueViolations
    /// Two objects swap a unique value in one block, in either order: only what the block
    /// leaves is checked.
    case uniqueSwaps
    /// Links inside containers (`[T]`, `[T?]`, `Set<T>`, `[T]?`): saved with their model, read
    /// back in order, queried, and read without a target that was deleted.
    case toManyLinks
    /// Links inside embedded models, dictionaries and nested arrays: saved with their model, read
    /// back, updated, queried through, and read as `nil` or left out once their target is deleted;
    /// a delete rule or an inverse through an embedded model is refused when the store opens.
    case embeddedLinks
    /// Unique arrays and sets: an element another object holds when the block ends is
    /// `StoreError.uniqueViolation`; repeats within an object and `nil` elements are not.
    case uniqueArrays
    /// Delete rules: `.cascade` deletes the linked objects with their source, `.deny` refuses
    /// a delete and deletes nothing, naming the same denied object and source on every store
    /// when several links deny at once, with string, UUID and unsigned keys
    /// (past `Int64.max`) spelled alike.
    case deleteRules
    /// Inverse relationships: `LinkingObjects` list the objects linking to a model, to-one and
    /// to-many, each once, in primary-key order, and follow writes and deletes.
    case inverses
    /// Values, distinct values, `min`, `max`, `sum` and `average` of a property, as Swift
    /// computes them on the models the same queries fetch (filters decided in the store or not,
    /// sorts, limits, no objects): NaN skipped, the first of equal values, `nil` skipped, an
    /// integer sum that overflows at any step in the results' order a `QueryError`.
    case aggregates
    /// Typed errors: an unknown model, a mistyped key; a block that throws rolls back; a closed
    /// store refuses reads and writes.
    case errors

    /// The check's name, as test reports show it.
    public var description: String { rawValue }

    /// The checks that apply to stores that reopen what they wrote (a file, a server) or not
    /// (a store in memory, which ``migrations`` does not apply to).
    public static func cases(reopens: Bool) -> [BehaviorCheck] {
        allCases.filter { reopens || $0 != .migrations }
    }
}
