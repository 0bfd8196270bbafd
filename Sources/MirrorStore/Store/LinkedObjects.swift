/// What ``WriteTransaction/add(_:linkedObjects:)`` does with the models a model links to that have
/// a primary key (models without one are always embedded in their parent).
///
/// Saving links writes the graph as given: a linked model read before another write, or a stub
/// built only to point at a key, replaces the stored one. Linking by key writes the reference
/// alone, so a stale or partial copy of a shared object changes nothing.
///
/// ```swift
/// hulk.publisher = Publisher(identifier: 1)                      // only the key matters
/// try transaction.add(hulk, linkedObjects: .referenceOnly)
/// ```
public enum LinkedObjects: Sendable, Equatable {
    /// Save every linked model under its own key too, replacing the stored one. The default.
    case save
    /// Store only the linked models' keys. Each must already be stored, or be added earlier in
    /// the same transaction; otherwise ``StoreError/Kind/missingLinkTarget(typeName:key:linkedFrom:)``
    /// is thrown and the model is not added.
    case referenceOnly
}
