import MirrorStore

/// What the behaviour suite asks a store factory to open.
public struct StoreOpening {
    /// A block that migrates any store: what the factory hands to its store's own migration.
    public typealias MigrationBlock = @Sendable (_ migration: any ModelMigration, _ oldSchemaVersion: Int) throws -> Void

    /// Where the store keeps its objects: opening the same place again finds what was written
    /// there (a file's name, say). A factory whose stores share one place may ignore it.
    public let place: String
    /// The models to open the store with.
    public let models: [any Persistable.Type]
    /// The application's schema version.
    public let schemaVersion: Int
    /// The migration to run when the place holds objects of a lower schema version.
    public let migration: MigrationBlock?
    /// Whether the store must start from nothing: the place's earlier objects and schemas of
    /// `models`, from this run or an earlier one, are gone.
    public let startsEmpty: Bool
    /// Models the store does not open with whose earlier objects and schemas must be gone too
    /// when it starts empty: types a later opening renames another type to. A factory whose
    /// places are new each time may ignore them.
    public var alsoEmptied: [any Persistable.Type] = []
}
