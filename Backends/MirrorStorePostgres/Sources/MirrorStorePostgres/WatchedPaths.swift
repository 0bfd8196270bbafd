import MirrorStore

/// The properties an observation watches (`changes(keyPaths:)`): each a path of property names
/// from the observed type through to-one links and embedded models (`["publisher", "name"]` for
/// `\.publisher?.name`), read from each result's record and the records it links to, as the
/// file store's observation reads them. A path's last value is compared with its links as keys
/// (`Fingerprint`): a path that ends at a link watches the link, not the linked model.
struct WatchedPaths: Sendable {
    let paths: [[String]]

    /// The paths `keyPaths` name, checked by MirrorStore as the file store checks them.
    ///
    /// - Throws: `QueryError` naming a key path that is not a stored property, or that goes on
    ///   from a property that is not a to-one link or an embedded model.
    init<Model: Persistable>(_ keyPaths: [PartialKeyPath<Model>], models: BackendModels) throws {
        paths = try keyPaths.map { try models.propertyPath(of: $0) }
    }

    /// The value each path reads in `record`: `.null` where a link or embedded model on the way
    /// is `nil` (or a property is missing from an older record).
    func values(in record: ManagedObject) -> [RecordValue] {
        paths.map { path in
            var value = RecordValue.object(record)
            for name in path {
                guard case .object(let current) = value, let position = current.objectSchema.index(ofProperty: name) else { return .null }
                value = current[propertyAt: position]
            }
            return value
        }
    }
}
