/// What a link property says about deletes, declared in ``Persistable/deleteRules``.
///
/// ```swift
/// final class Owner: Persistable {
///     var id = 0
///     var pets: [Pet] = []
///     var vet: Vet?
///     static var primaryKey: String? { "id" }
///     // Deleting an owner deletes its pets; a vet an owner still links to cannot be deleted.
///     static var deleteRules: [String: DeleteRule] { ["pets": .cascade, "vet": .deny] }
/// }
/// ```
public enum DeleteRule: Sendable, Equatable {
    /// Deleting the linked object leaves the link reading `nil` (to-one) or without it
    /// (to-many); deleting this object leaves the linked ones. What links do by default.
    case nullify
    /// Deleting this object deletes the objects it links to through the property, in the same
    /// transaction, and theirs in turn by their own rules; cycles end at objects already deleted.
    case cascade
    /// Deleting an object this one links to through the property throws
    /// ``StoreError/Kind-swift.enum/deleteDenied(typeName:key:linkedFrom:sourceKey:property:)``,
    /// naming this object, and deletes nothing, unless the same delete removes this object too.
    case deny
}
