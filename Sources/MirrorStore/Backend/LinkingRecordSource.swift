/// Where a backend finds the stored records that link to a record, so that
/// ``BackendModels/model(_:from:linkingRecords:)`` fills the model's ``LinkingObjects`` as a
/// store read does.
///
/// ```swift
/// final class Linking: LinkingRecordSource {
///     var found: [String: [ManagedObject]] = [:]     // read ahead, by source, property and key
///     func records(of sourceType: String, linkingThrough property: String, to key: RecordValue) throws -> [ManagedObject] {
///         found["\(sourceType).\(property)=\(key)"] ?? []
///     }
/// }
/// let person = try models.model(Person.self, from: record, linkingRecords: Linking())
/// ```
public protocol LinkingRecordSource: AnyObject {
    /// The stored records of `sourceType` whose link property `property` (to-one or to-many)
    /// points at the object under `key`, each once, in primary-key order.
    func records(of sourceType: String, linkingThrough property: String, to key: RecordValue) throws -> [ManagedObject]
}
