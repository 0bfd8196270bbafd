/// A store operation that cannot be carried out.
///
/// Mapping problems surface as ``MappingError`` and file problems as ``StorageError``;
/// `StoreError` covers what lies between: schemas, model registration, keys, records that do not
/// decode, and calls that cannot run where they were made.
///
/// Keys in messages read alike in every store: an integer's digits (a `UInt64` key's as its
/// value, past `Int64.max` too), a string as a Swift literal (`"l5"`, apart from `5`), a UUID as
/// its standard string.
///
/// ```swift
/// do {
///     let store = try Store(path: path, models: [Hero.self])
/// } catch let error as StoreError {
///     print(error)   // The store's schema for Hero differs from the model: …
/// }
/// ```
public struct StoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong. New cases may be added; switch with a `default`.
    public enum Kind: Equatable, Sendable {
        /// The file's schemas differ from the models' but the schema version was not raised;
        /// each difference is one sentence naming its type. `version` is the file's version.
        case schemaChanged(version: Int, differences: [String])
        /// The file was written with a newer schema version than the store was opened with.
        case newerSchemaVersion(stored: Int, configured: Int)
        /// The model type was not declared when the store was opened, and no declared model links to it.
        case unknownModel(typeName: String)
        /// Two model types share one stored type name.
        case duplicateTypeName(typeName: String)
        /// The operation needs a primary key and the model has none.
        case noPrimaryKey(typeName: String)
        /// The key given does not fit the model's primary-key property.
        case primaryKeyMismatch(typeName: String, expected: String, found: String)
        /// A stored record does not decode.
        case corruptedRecord(typeName: String, key: String, reason: String)
        /// Embedded records and containers nest `levels` deep: past the 200 levels a record may
        /// nest, or more than the thread's stack can follow; nothing was read or written. Links
        /// of any length are followed.
        case nestingTooDeep(typeName: String, levels: Int)
        /// A cycle through models without a primary key, which are embedded in their parent.
        case embeddedCycle(typeName: String)
        /// A property holds a value no stored form keeps (a NaN date); nothing was written.
        case unstorableValue(typeName: String, property: String, reason: String)
        /// A transaction was used after its `write` block returned.
        case transactionEnded
        /// A position outside a ``Results``.
        case positionOutOfRange(typeName: String, position: Int, count: Int)
        /// A transaction would give two objects the same value of a unique property, or the same
        /// values of a unique compound index's properties (`property` is then `team+number`);
        /// nothing was written. Every store spells `value` alike: a string as a Swift literal of
        /// its NFC form (`"Hulk"`), a link as its target's key, a compound's values as a tuple
        /// (`("Avengers", 7)`); see ``BackendModels/uniqueValueText(_:)``.
        ///
        /// When a transaction breaks uniqueness in several places at once (against stored
        /// objects or within itself), every store names the same one, whatever order the writes
        /// came in: the type first by name, then the property first by name (a compound index's
        /// `team+number` counts as one name), then its smallest value shared, in the order
        /// sorted results use (an array's elements one by one).
        case uniqueViolation(typeName: String, property: String, value: String)
        /// A model added with ``LinkedObjects/referenceOnly`` links to an object that is not stored.
        case missingLinkTarget(typeName: String, key: String, linkedFrom: String)
        /// `write`, `compact` or `close` was called inside a write block of the same store, on the
        /// same thread, where it would wait forever for that block; `operation` names the call.
        case calledInsideWrite(operation: String)
        /// ``Results/changes`` was asked of results made inside a write transaction, which see
        /// writes not yet committed and so cannot follow later commits.
        case notObservable(typeName: String)
        /// A key path given to ``WriteTransaction/update(_:primaryKey:set:to:)-(_,_,KeyPath<Model,Value>,_)``
        /// does not name one stored property of the model.
        case notAStoredProperty(typeName: String, keyPath: String)
        /// The file holds `rawValue` for `property` (`Type.property`), and the model's enum
        /// `enumType` has no case for it: a case was removed or its raw value changed. The store
        /// does not open, so no read meets the value.
        case unknownEnumValue(property: String, enumType: String, rawValue: String)
        /// `typeName.property` has a ``DeleteRule`` but is not a link to a model with a primary key.
        case invalidDeleteRule(typeName: String, property: String, reason: String)
        /// The `typeName` object under `key` cannot be deleted: the `linkedFrom` object under `sourceKey`
        /// still links to it through `property`, whose rule is ``DeleteRule/deny``. Nothing was deleted.
        ///
        /// When a delete breaks several such links at once, every store names the same one: the
        /// denied object first by type name, then by primary key; then, of the objects still
        /// linking to it, the first by type name, then property name, then primary key. Keys
        /// order as unsorted results do: integers numerically, strings by the code points of
        /// their NFC form, UUIDs by their bytes.
        case deleteDenied(typeName: String, key: String, linkedFrom: String, sourceKey: String, property: String)
    }

    /// What went wrong.
    public let kind: Kind

    /// An error of `kind`, for storage backends outside this package that report the same
    /// errors as the file store (a unique violation, an unknown model).
    ///
    /// ```swift
    /// throw StoreError(.uniqueViolation(typeName: "Hero", property: "name", value: "Hulk"))
    /// ```
    public init(_ kind: Kind) { self.kind = kind }

    /// One sentence saying what went wrong and what to do.
    public var description: String {
        switch kind {
        case .schemaChanged(let version, let differences):
            return "The store's schemas differ from the models: \(differences.joined(separator: "; ")); raise Configuration.schemaVersion above \(version) to migrate the store (add a Configuration.migration for changes the automatic rules do not cover), or open it with the models it was written with."
        case .newerSchemaVersion(let stored, let configured):
            return "The store was written with schema version \(stored), newer than this app's version \(configured)."
        case .unknownModel(let typeName):
            return "\(typeName) is not one of this store's models; list it in the models the store is opened with."
        case .duplicateTypeName(let typeName):
            return "Two model types are stored under the name \(typeName); give one a different persistedTypeName."
        case .noPrimaryKey(let typeName):
            return "\(typeName) has no primary key, so its objects cannot be found, updated or deleted one by one."
        case .primaryKeyMismatch(let typeName, let expected, let found):
            return "The primary key of \(typeName) is a \(expected), but the key given is \(found)."
        case .corruptedRecord(let typeName, let key, let reason):
            return "The stored \(typeName) with key \(key) cannot be read: \(reason)."
        case .nestingTooDeep(let typeName, let levels):
            if levels >= RecordGrammar.maximumNesting {
                return "\(typeName) records embed one another or nest containers \(levels) levels deep, more than the \(RecordGrammar.maximumNesting) a record may hold; nothing was written. Give the embedded model a primary key to link it instead, or split the chain."
            }
            return "\(typeName) records link or embed one another \(levels) levels deep, more than this thread's stack can follow; nothing was read or written. Use a thread with a larger stack, or split the chain."
        case .embeddedCycle(let typeName):
            return "A cycle runs through \(typeName), which has no primary key and is embedded in its parent; give it a primary key to link it in cycles."
        case .unstorableValue(let typeName, let property, let reason):
            return "\(typeName).\(property) holds \(reason), which a store cannot keep; nothing was written."
        case .transactionEnded:
            return "The write transaction was used after its write block returned."
        case .positionOutOfRange(let typeName, let position, let count):
            return "Position \(position) is outside the \(count) results of \(typeName)."
        case .missingLinkTarget(let typeName, let key, let linkedFrom):
            return "A \(linkedFrom) links by key to \(typeName) \(key), which is not stored; add that \(typeName) first, or add the \(linkedFrom) with linkedObjects: .save. Nothing was added."
        case .uniqueViolation(let typeName, let property, let value):
            let rule = property.contains("+") ? "a unique compound index" : "uniqueProperties"
            return "Two \(typeName) objects would have \(property) \(value), which \(rule) forbids; nothing was written."
        case .calledInsideWrite(let operation):
            return "\(operation) was called inside a write block of the same store, where it would wait forever for that block to end; use the block's transaction, or call it after the block returns."
        case .notObservable(let typeName):
            return "These \(typeName) results were made inside a write transaction and cannot be observed; observe results made with store.objects(_:) instead."
        case .notAStoredProperty(let typeName, let keyPath):
            return "\(keyPath) does not name a stored property of \(typeName), so update(_:primaryKey:set:to:) cannot set it; use update(_:primaryKey:_:) with a closure."
        case .invalidDeleteRule(let typeName, let property, let reason):
            return "\(typeName).\(property) has a delete rule, but \(reason); delete rules apply to links to models with a primary key."
        case .deleteDenied(let typeName, let key, let linkedFrom, let sourceKey, let property):
            return "The \(typeName) with key \(key) cannot be deleted: the \(linkedFrom) with key \(sourceKey) still links to it through \(property), whose delete rule is .deny; nothing was deleted. Remove the link first, or delete that \(linkedFrom) in the same transaction."
        case .unknownEnumValue(let property, let enumType, let rawValue):
            return "The store holds \(property) = \(rawValue), but \(enumType) has no case with that raw value; open it with the enum it was written with, or raise Configuration.schemaVersion and give a Configuration.migration that sets such objects' \(property.split(separator: ".").last.map(String.init) ?? property) to a raw value \(enumType) has (migration.enumerateObjects) or deletes them."
        }
    }
}

extension StoreError {
    /// The stored record of `typeName` under `key` did not decode.
    init(_ failure: RecordCodingFailure, typeName: String, key: String) {
        self.init(.corruptedRecord(typeName: typeName, key: key, reason: failure.reason))
    }
}
