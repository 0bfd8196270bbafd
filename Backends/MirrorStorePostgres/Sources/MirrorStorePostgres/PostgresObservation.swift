import Foundation
import MirrorStore

/// One element of ``PostgresResults/changes``: the results after a commit, and how they differ
/// from the previous element, as index sets a table or collection view can animate (as
/// MirrorStore's `ResultsChange`).
///
/// Apply `deletions` (indices in the previous results) to the previous results, then
/// `insertions` (indices in the new ``results``), and the previous results become the new ones;
/// an object that moved is deleted and inserted. `modifications` are indices in the new results
/// of objects that stayed in place and whose stored values (or those of a model they link to or
/// embed) changed.
public struct PostgresResultsChange<Model: Persistable> {
    /// The results as of the commit this change describes.
    public let results: [Model]
    /// Positions in the previous results of the objects no longer there (or moved).
    public let deletions: IndexSet
    /// Positions in ``results`` of the objects that were not there before (or moved).
    public let insertions: IndexSet
    /// Positions in ``results`` of the objects that stayed in place but changed.
    public let modifications: IndexSet
}

/// The `AsyncSequence` of ``PostgresResults/changes``: the results now, then after each commit
/// (by this process or any other) that changes them.
///
/// Each commit's write block sends `pg_notify` on the store's channel with the types it wrote; the
/// store's one `LISTEN` connection (opened when the first observation starts) wakes the
/// observations of those types and of the types they link to, which read their query again and
/// yield only when something changed. Commits that arrive while the consumer is busy coalesce
/// into one element. Cancelling the consuming task, or closing the store, ends the sequence.
public struct PostgresResultsChanges<Model: Persistable>: AsyncSequence, Sendable {
    /// The results after a commit, with what changed.
    public typealias Element = PostgresResultsChange<Model>

    let results: PostgresResults<Model>
    /// The property paths whose changes count, or `nil` for every stored value.
    let watched: WatchedPaths?

    /// A new observation, which starts listening when it is first asked for an element.
    public func makeAsyncIterator() -> Iterator { Iterator(results: results, watched: watched) }

    /// Waits for the next change of the results.
    public struct Iterator: AsyncIteratorProtocol {
        let results: PostgresResults<Model>
        let watched: WatchedPaths?
        var subscription: AsyncThrowingStream<Void, any Error>.AsyncIterator?
        var previous: [(key: RecordValue, fingerprint: Fingerprint)] = []
        var isFinished = false

        /// The results after the next commit that changes them (the first call: as they are
        /// now, everything an insertion), or `nil` once the task is cancelled or the store closed.
        ///
        /// - Throws: ``PostgresStoreError`` when the server cannot be reached (the listening
        ///   connection was lost) or a row does not read back; what a predicate throws.
        public mutating func next() async throws -> PostgresResultsChange<Model>? {
            guard !isFinished else { return nil }
            do {
                if subscription == nil {
                    let types = results.store.mapping.reachableTypes(from: results.table.typeName)
                    let stream = try await results.store.listener.subscribe { notice in types.contains { notice.touches($0) } }
                    subscription = stream.stream.makeAsyncIterator()
                    let entries = try await results.entries(watching: watched)
                    previous = entries.map { ($0.key, $0.fingerprint) }
                    return PostgresResultsChange(
                        results: entries.map(\.model), deletions: [], insertions: IndexSet(integersIn: entries.indices), modifications: [])
                }
                while true {
                    guard try await subscription?.next() != nil else {
                        isFinished = true
                        return nil
                    }
                    let entries = try await results.entries(watching: watched)
                    let change = Self.change(from: previous, to: entries)
                    previous = entries.map { ($0.key, $0.fingerprint) }
                    if !change.deletions.isEmpty || !change.insertions.isEmpty || !change.modifications.isEmpty { return change }
                }
            } catch let error as PostgresStoreError where error.kind == .closed {
                isFinished = true
                return nil
            } catch {
                isFinished = true
                throw error
            }
        }

        static func change(
            from old: [(key: RecordValue, fingerprint: Fingerprint)], to new: [PostgresResults<Model>.Entry]
        ) -> PostgresResultsChange<Model> {
            let difference = new.map(\.key).difference(from: old.map(\.key))
            var deletions = IndexSet(), insertions = IndexSet()
            for step in difference {
                switch step {
                case .remove(let offset, _, _): deletions.insert(offset)
                case .insert(let offset, _, _): insertions.insert(offset)
                }
            }
            // Positions that stayed: walk both lists past the removed and inserted ones together.
            var modifications = IndexSet()
            var oldIndex = 0
            for newIndex in new.indices where !insertions.contains(newIndex) {
                while deletions.contains(oldIndex) { oldIndex += 1 }
                if oldIndex < old.count, old[oldIndex].fingerprint != new[newIndex].fingerprint { modifications.insert(newIndex) }
                oldIndex += 1
            }
            return PostgresResultsChange(results: new.map(\.model), deletions: deletions, insertions: insertions, modifications: modifications)
        }
    }
}

extension PostgresResults {
    /// The results now, then again after every commit — by this store, another store on the same
    /// database, or another process — that changes them, from PostgreSQL's `LISTEN`/`NOTIFY`.
    ///
    /// ```swift
    /// for try await change in try store.objects(Hero.self).filter(#Predicate { $0.age > 40 }).changes {
    ///     tableView.apply(deletions: change.deletions, insertions: change.insertions,
    ///                     modifications: change.modifications)
    /// }
    /// ```
    public var changes: PostgresResultsChanges<Model> { PostgresResultsChanges(results: self, watched: nil) }

    /// ``changes`` that come only when the results gain or lose an object, change order, or one
    /// of the properties at `keyPaths` (or a model it links to or embeds) changes;
    /// `modifications` then lists only those results.
    ///
    /// ```swift
    /// for try await change in try heroes.changes(keyPaths: [\.name, \.publisher?.name]) {
    ///     tableView.reloadRows(at: change.modifications)   // not for a change of realName
    /// }
    /// ```
    ///
    /// A key path may go through to-one links and embedded models (`\.publisher?.name`), as in
    /// a predicate: a change of the linked object's watched property counts as a modification of
    /// each result that links to it, a change of its other properties does not. A key path that
    /// ends at a link (`\.publisher`) watches the link, as the file store does: a result is
    /// modified when it links to another object (or to none), not when the linked object
    /// changes; one that ends at an embedded model watches its values and its links alike.
    ///
    /// - Throws: `QueryError` (`.unknownProperty`) naming a key path that is not a stored
    ///   property, or that goes on from a property that is not a to-one link or embedded model.
    public func changes(keyPaths: [PartialKeyPath<Model>]) throws -> PostgresResultsChanges<Model> {
        PostgresResultsChanges(results: self, watched: try WatchedPaths(keyPaths, models: store.mapping.models))
    }
}

/// The `AsyncSequence` of ``PostgresStore/changes(_:primaryKey:)``: the object, or `nil` when it
/// is not stored, now and after each commit that changes it or a model it links to.
public struct PostgresObjectChanges<Model: Persistable>: AsyncSequence, Sendable {
    /// The object as of a commit, or `nil` when there is none.
    public typealias Element = Model?

    let store: PostgresStore
    let table: TableMapping
    let primaryKey: PrimaryKeyValue
    /// The property paths whose changes count, or `nil` for every stored value.
    let watched: WatchedPaths?

    /// A new observation, which starts listening when it is first asked for an element.
    public func makeAsyncIterator() -> Iterator { Iterator(changes: self) }

    /// Waits for the next change of the object.
    public struct Iterator: AsyncIteratorProtocol {
        let changes: PostgresObjectChanges<Model>
        var subscription: AsyncThrowingStream<Void, any Error>.AsyncIterator?
        var previous: Fingerprint?
        var isFinished = false

        /// The object after the next commit that changes it (the first call: as it is now), or
        /// `nil` at the end of the sequence, once the task is cancelled or the store closed.
        ///
        /// - Throws: ``PostgresStoreError`` when the server cannot be reached (the listening
        ///   connection was lost) or the row does not read back.
        public mutating func next() async throws -> Model?? {
            guard !isFinished else { return nil }
            let store = changes.store, table = changes.table, key = changes.primaryKey.value
            do {
                if subscription == nil {
                    let keyText = PrimaryKeys.text(key)
                    let linked = store.mapping.reachableTypes(from: table.typeName).subtracting([table.typeName])
                    let typeName = table.typeName
                    let stream = try await store.listener.subscribe { notice in
                        notice.touches(typeName, key: keyText) || linked.contains { notice.touches($0) }
                    }
                    subscription = stream.stream.makeAsyncIterator()
                    let (model, fingerprint) = try await store.observedObject(Model.self, table: table, key: key, watching: changes.watched).value
                    previous = fingerprint
                    return .some(model)
                }
                while true {
                    guard try await subscription?.next() != nil else {
                        isFinished = true
                        return nil
                    }
                    let (model, fingerprint) = try await store.observedObject(Model.self, table: table, key: key, watching: changes.watched).value
                    if fingerprint != previous {
                        previous = fingerprint
                        return .some(model)
                    }
                }
            } catch let error as PostgresStoreError where error.kind == .closed {
                isFinished = true
                return nil
            } catch {
                isFinished = true
                throw error
            }
        }
    }
}

extension PostgresStore {
    /// The object stored under `primaryKey` now, then again after every commit — by this store,
    /// another store on the same database, or another process — that changes it or a model it
    /// links to: `nil` while there is none, as after a delete.
    ///
    /// ```swift
    /// for try await hero in try store.changes(Hero.self, primaryKey: 1455) {
    ///     print(hero?.publisher?.name ?? "deleted")
    /// }
    /// ```
    ///
    /// Commits that arrive while the consumer is busy coalesce into one element; cancelling the
    /// consuming task, or closing the store, ends the sequence.
    ///
    /// - Throws: `StoreError` when the model is not one of the store's or the key does not fit.
    public func changes<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) throws -> PostgresObjectChanges<Model> {
        let table = try mapping.table(for: Model.self)
        let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
        return PostgresObjectChanges(store: self, table: table, primaryKey: PrimaryKeyValue(value: key), watched: nil)
    }

    /// ``changes(_:primaryKey:)`` that come only when the object appears, disappears, or one of
    /// the properties at `keyPaths` (or a model it links to or embeds) changes.
    ///
    /// ```swift
    /// for try await hero in try store.changes(Hero.self, primaryKey: 1455, keyPaths: [\.name]) {
    ///     title = hero?.name ?? ""                          // not for a change of realName
    /// }
    /// ```
    ///
    /// A key path may go through to-one links and embedded models (`\.publisher?.name`), as in
    /// ``PostgresResults/changes(keyPaths:)``.
    ///
    /// - Throws: `StoreError` when the model is not one of the store's or the key does not fit;
    ///   `QueryError` (`.unknownProperty`) naming a key path that is not a stored property, or
    ///   that goes on from a property that is not a to-one link or embedded model.
    public func changes<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, keyPaths: [PartialKeyPath<Model>]
    ) throws -> PostgresObjectChanges<Model> {
        let table = try mapping.table(for: Model.self)
        let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
        return PostgresObjectChanges(
            store: self, table: table, primaryKey: PrimaryKeyValue(value: key), watched: try WatchedPaths(keyPaths, models: mapping.models))
    }

    /// The object under `key` and its fingerprint, read now.
    func observedObject<Model: Persistable>(
        _ type: Model.Type, table: TableMapping, key: RecordValue, watching: WatchedPaths?, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Handoff<(Model?, Fingerprint?)> {
        try await withConnection(isolation: isolation) { connection in
            let reader = RowReader(connection: connection, mapping: self.mapping)
            guard let record = try await reader.record(table: table, key: key) else { return Handoff((nil, nil)) }
            return Handoff((try reader.model(Model.self, from: record), Fingerprint(record, watching: watching, inverses: reader.inverseRecords(of:))))
        }
    }
}

extension DatabaseMapping {
    /// `typeName` and the types its links reach and its inverses read from, at any depth: the
    /// types whose changes may change what a read of `typeName` returns.
    func reachableTypes(from typeName: String) -> Set<String> {
        var reached: Set<String> = [typeName]
        var queue = [typeName]
        while let next = queue.popLast() {
            guard let table = tables[next] else { continue }
            for column in table.columns {
                for target in column.linkTargets where reached.insert(target).inserted { queue.append(target) }
            }
            for inverse in table.inverses where reached.insert(inverse.sourceTypeName).inserted {
                queue.append(inverse.sourceTypeName)
            }
        }
        return reached
    }
}

extension PostgresResultsChange: Sendable where Model: Sendable {}

/// A checked primary key, kept by a `Sendable` sequence. `@unchecked`: a key is a single value
/// (an integer, a string, a UUID), never the `object` case, the one that holds a reference.
struct PrimaryKeyValue: @unchecked Sendable {
    let value: RecordValue
}
