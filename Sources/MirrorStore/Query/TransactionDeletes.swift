import Foundation
import MirrorStoreEngine

extension WriteTransaction {
    /// Deletes every object of a type that satisfies `predicate`, as this transaction sees the
    /// objects now: the stored ones with the block's earlier adds, updates and deletes applied.
    ///
    /// ```swift
    /// try store.write { transaction in
    ///     try transaction.add(veteran)                       // age 95: deleted below
    ///     let retired = try transaction.delete(Hero.self, where: #Predicate { $0.age > 90 })
    ///     try transaction.add(newcomer)                      // age 99: added after, so kept
    /// }
    /// ```
    ///
    /// The predicate is decided once, at the call: objects added later in the block are not
    /// deleted, even when they match. It is answered as ``Results/filter(_:)`` answers it, from
    /// the stored records where it can be and on decoded models where it cannot. Models linking
    /// to a deleted object read the link as `nil` (to-one) or without it (to-many), and the
    /// models' ``DeleteRule``s apply as for every other delete. The indexes are brought up to date
    /// when the transaction commits.
    ///
    /// - Returns: The number of objects that matched and are deleted (not counting those a
    ///   ``DeleteRule/cascade`` deleted with them).
    /// - Throws: ``QueryError`` for a predicate on an ignored property; ``StoreError`` or
    ///   ``MappingError`` when a record cannot be read, and ``StoreError`` when a rule denies
    ///   deleting one of them (nothing is deleted then); what the predicate itself throws.
    @discardableResult
    public func delete<Model: Persistable>(_ type: Model.Type, where predicate: Predicate<Model>) throws -> Int {
        try checkOpen()
        let source = QuerySource(snapshot: snapshot, registry: registry, entry: try registry.entry(for: type))
        let (node, root) = try PredicateTranslator(registry: registry).translate(predicate)
        let keys = try TransactionMatches<Model>(source: source, pending: pending)
            .keys(satisfying: [QueryCondition(predicate: predicate, node: node, root: root)])
        return try delete(type: source.plan.typeName, keys: keys)
    }

    /// Deletes the objects `results` list, by primary key: those of a query made before, whatever
    /// this transaction did to them since (the query is not run again).
    ///
    /// ```swift
    /// let stale = try store.objects(Hero.self).filter(#Predicate { $0.age > 90 })
    /// try store.write { transaction in
    ///     try transaction.delete(stale)
    /// }
    /// ```
    ///
    /// - Returns: The number of listed objects that existed in this transaction and are deleted.
    @discardableResult
    public func delete<Model: Persistable>(_ results: Results<Model>) throws -> Int {
        try checkOpen()
        let typeName = try registry.plan(for: Model.self).typeName
        return try delete(type: typeName, keys: results.storageKeys)
    }
}
