import MirrorStore

/// A PostgreSQL migration takes the steps every store takes, so a block written against
/// `ModelMigration` migrates this store and the file store alike.
extension PostgresMigration: ModelMigration {}
