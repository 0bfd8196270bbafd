/// The file store's migration takes the steps every store takes, and more.
extension Migration: ModelMigration {}
