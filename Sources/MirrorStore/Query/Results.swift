import Foundation
import MirrorStoreEngine

/// The objects of one model type in a consistent snapshot of the store: all of them, or those a
/// `#Predicate` selects, in primary-key order or sorted with `SortDescriptor`s.
///
/// Results are a lazy `RandomAccessCollection`: ``count`` and slicing read no object, and each
/// element is decoded into a model when it is read. They are values that can cross threads;
/// later writes do not change them.
///
/// ```swift
/// let marvel = try store.objects(Hero.self)
///     .filter(#Predicate { $0.publisher?.name == "Marvel" })
///     .sorted(using: SortDescriptor(\.name))
/// let firstTwenty = marvel.prefix(20)     // decodes 20 objects at most
/// for hero in marvel { print(hero.name) }
/// print(marvel.plan)                      // which index, what is scanned
/// ```
///
/// Filtering and sorting run when ``filter(_:)`` and ``sorted(using:)-(SortDescriptor<Model>)``
/// are called, on the encoded records: a record that does not match never becomes a model. A
/// part of a predicate the store cannot read from records (a computed property, say) is decided
/// by evaluating the predicate on the decoded model.
///
/// Reading an element cannot throw, so what would keep a stored record from becoming a model is
/// checked when the store opens, not when results are made (which reads no object): the file's
/// checksums, its schemas against the models', and the raw values its enums hold, which the
/// file records as they are written (a case the app dropped is
/// ``StoreError/Kind-swift.enum/unknownEnumValue(property:enumType:rawValue:)``). A record the
/// store wrote therefore reads back as its model. A subscript never makes up a model: a position
/// outside the results traps, as an array's does, and so does a record that fails all the same,
/// which only damage the checksums cannot see leaves (a crafted file, or bytes changed under a
/// running store). The throwing ``object(at:)`` and ``all()`` report every failure as an error:
/// read through them where the file may have been tampered with.
public struct Results<Model: Persistable>: RandomAccessCollection, Sendable {
    let source: QuerySource
    /// Everything else, behind one reference: results are made, copied and dropped several
    /// times per query, and each stored reference was one more retain, release and object.
    private let state: ResultsState

    init(source: QuerySource) {
        self.source = source
        state = source.everyObject
    }

    private init(source: QuerySource, state: ResultsState) {
        self.source = source
        self.state = state
    }

    /// How the results were found and ordered.
    public var plan: QueryPlan { state.plan }

    var conditions: [QueryCondition] { state.conditions }
    /// Whether the results are every object of the type, unfiltered, in primary-key order.
    var isEveryObject: Bool {
        if case .all = rows { return true }
        return false
    }
    var rows: ResultsRows { state.rows }

    // MARK: Collection

    /// The first position, always 0.
    public var startIndex: Int { 0 }

    /// The number of results: no object is read.
    public var endIndex: Int {
        switch rows {
        case .all: source.snapshot.count(type: source.plan.typeName)
        case .keys(let found): found.keys.count
        case .index(let positions): positions.count
        case .range(let range): state.count { range.count }
        case .walk(let walk): walk.count
        }
    }

    /// The object at `position`, decoded now.
    ///
    /// `position` must be in `indices`: outside them the subscript traps, as an array's does
    /// (``object(at:)`` throws instead). See the type's discussion for why a read here succeeds.
    public subscript(position: Int) -> Model {
        do {
            return try model(at: position)
        } catch {
            if position < 0 || position >= endIndex {
                fatalError("Index out of range: position \(position) of \(count) \(source.plan.typeName) results")
            }
            // Only damage the open-time checks cannot see gets here; a model made up here would
            // reach the app as stored data.
            fatalError("The \(source.plan.typeName) at position \(position) could not be read: \(error) Read through object(at:) or all() to get this as an error.")
        }
    }

    /// The first `maxLength` results, or all of them when there are fewer (none for a negative
    /// length); each is decoded when it is read.
    ///
    /// Results in an index's order read that many of the index's entries now, rather than
    /// reading ahead by a guess when the first one is read.
    ///
    /// ```swift
    /// let newest = try store.objects(Message.self).sorted(using: SortDescriptor(\.date, order: .reverse))
    /// let screen = Array(newest.prefix(20))
    /// ```
    public func prefix(_ maxLength: Int) -> Slice<Results<Model>> {
        // `endIndex` and `Slice`, not `count` and a range subscript: results run unspecialised,
        // where those go through `Collection`'s generic defaults.
        let length = Swift.min(Swift.max(maxLength, 0), endIndex)
        // A failed read is left to the reads of the positions, which report it.
        switch rows {
        case .index(let positions): try? positions.readAhead(length)
        case .walk(let walk): try? walk.readAhead(length, sortingRange: { try sortedRange(of: walk) })
        case .all, .keys, .range: break
        }
        return Slice(base: self, bounds: 0..<length)
    }

    /// The object at `position`, decoded now: its key is taken from the rows and read straight
    /// away, with no key and location passed on in between. Throws `positionOutOfRange` for a
    /// position outside the rows.
    private func model(at position: Int) throws -> Model {
        switch rows {
        case .index(let positions):
            guard let key = try positions.object(at: position) else { throw outOfRange(position) }
            return try source.listedModel(Model.self, key: key, at: nil)
        case .walk(let walk):
            guard let (key, location) = try walk.object(at: position, sortingRange: { try sortedRange(of: walk) }) else { throw outOfRange(position) }
            return try source.listedModel(Model.self, key: key, at: location)
        case .keys(let found):
            guard found.keys.indices.contains(position) else { throw outOfRange(position) }
            return try source.listedModel(Model.self, key: found.keys[position], at: found.location(at: position))
        case .all, .range:
            let keys = try keysInKeyOrder
            guard keys.indices.contains(position) else { throw outOfRange(position) }
            return try source.listedModel(Model.self, key: keys[position], at: nil)
        }
    }

    private func outOfRange(_ position: Int) -> StoreError {
        StoreError(.positionOutOfRange(typeName: source.plan.typeName, position: position, count: count))
    }

    /// The primary keys of the results, in order, without decoding them: for tests that compare
    /// many results cheaply.
    @_spi(Testing) public var storageKeys: [StorageKey] { get throws { try allKeys } }

    /// The keys of all results, in order.
    var allKeys: [StorageKey] {
        get throws {
        switch rows {
        case .all, .range: try keysInKeyOrder
        case .keys(let found): found.keys
        case .index(let positions): try positions.objects()
        case .walk(let walk): try walk.objects(sortingRange: { try sortedRange(of: walk) }).keys
        }
        }
    }

    /// The keys of all results, in order, with where their records lie when the query read them.
    var foundKeys: FoundKeys {
        get throws {
        switch rows {
        case .keys(let found): return found
        case .walk(let walk): return try walk.objects(sortingRange: { try sortedRange(of: walk) })
        case .all, .range, .index: return FoundKeys(try allKeys)
        }
        }
    }

    /// The keys of rows kept in key order, put in that order on first use.
    private var keysInKeyOrder: [StorageKey] {
        get throws {
        // Most often one key, for an equality on a unique value: nothing to sort or keep.
        if case .range(let range) = rows, let keys = range.listedInKeyOrder { return keys }
        return try state.keysInKeyOrder {
            switch rows {
            case .range(let range):
                let keys = try range.keysInIndexOrder
                return keys.count < 2 ? keys : keys.sorted(by: StorageKey.precedes)
            // Rows that keep their keys never ask.
            case .all, .keys, .index, .walk: return try source.snapshot.keys(type: source.plan.typeName).sorted(by: StorageKey.precedes)
            }
        }
        }
    }

    /// The object at `position`, decoded now.
    ///
    /// - Throws: ``StoreError`` for a position outside the results or a record that does not
    ///   decode, ``MappingError`` for a value the model cannot hold.
    public func object(at position: Int) throws -> Model {
        try model(at: position)
    }

    /// Every result, decoded now, in order. Links shared between results come back shared.
    ///
    /// - Throws: ``StoreError`` or ``MappingError`` when a stored record cannot become a model.
    @inlinable
    public func all() throws -> [Model] {
        // Inlined where `Model` is known, so that the array is made and grown where its type is
        // known: out of line, its metadata was looked up and it grew through unspecialised
        // code on every call.
        var models: [Model] = []
        if let every = try readAll(reserving: { models.reserveCapacity($0) }, { models.append($0) }) { return every }
        return models
    }

    /// ``all()`` where `Model` is not known: the models of every object when the results are
    /// every object of the type, read at once; otherwise `nil`, once `reserve` has been told how
    /// many results there are and `append` has been given each, in order.
    @usableFromInline
    func readAll(reserving reserve: (Int) -> Void, _ append: (Model) -> Void) throws -> [Model]? {
        if case .all = rows { return try source.reader().allModels(Model.self) }
        let found = try foundKeys
        let keys = found.keys
        reserve(keys.count)
        if source.entry.isStandalone {
            // No links, so nothing for the models to share: each is read on its own, with no reader made.
            for position in keys.indices {
                append(try source.listedModel(Model.self, key: keys[position], at: found.location(at: position)))
            }
            return nil
        }
        // One reader for all: links shared between results come back shared.
        let reader = source.reader()
        for position in keys.indices {
            let key = keys[position]
            append(try reader.model(Model.self, key: key, bytes: source.listedBytes(of: key, at: found.location(at: position))))
        }
        return nil
    }

    /// The name and schema position of the stored property `property` reads, for the operations
    /// that take a key path to one (aggregates, projections, text matches and sorts).
    ///
    /// - Throws: ``QueryError`` when it reads no stored property, or an ignored one.
    func storedProperty<Value>(_ property: KeyPath<Model, Value>) throws -> (name: String, position: Int) {
        let schema = source.schema
        guard let name = KeyPathNames.propertyName(of: property, rootType: Model.self) else {
            throw QueryError(.unknownProperty(typeName: schema.typeName, property: KeyPathNames.errorName(of: property, rootType: Model.self)))
        }
        if schema.ignoredProperties.contains(name) { throw QueryError(.ignoredProperty(typeName: schema.typeName, property: name)) }
        guard let position = schema.index(ofProperty: name) else { throw QueryError(.unknownProperty(typeName: schema.typeName, property: name)) }
        return (name, position)
    }

    /// The same filters and sorts run again on `source`, a newer snapshot of the same store.
    func rerun(on source: QuerySource) throws -> Results<Model> {
        var results = Results(source: source)
        for step in state.steps {
            switch step {
            case .filter(let condition): results = try results.filter(condition)
            case .sort(let descriptors):
                // Recorded only by `sorted(by:)` of results of this model, with its descriptors.
                guard let descriptors = descriptors as? [SortDescriptor<Model>] else { continue }
                results = try results.sorted(by: descriptors)
            case .sortByProperty(let name, let ascending): results = try results.sorted(byProperty: name, ascending: ascending)
            case .sortFolded(let key): results = try results.sorted(folded: key)
            case .sortOnRecords(let keys): results = try results.sorted(onStoredProperties: keys)
            }
        }
        return results
    }

    // MARK: Filtering

    /// The results that also satisfy `predicate`, in the same order.
    ///
    /// The store answers the predicate from its indexes and encoded records where it can (see
    /// ``plan``) and from decoded models where it cannot, so every predicate `#Predicate` accepts
    /// gives the same answer as `filter` on an array of the models.
    ///
    /// - Throws: ``QueryError`` for a predicate on an ignored property; ``StoreError`` or
    ///   ``MappingError`` when a record cannot be read; what the predicate itself throws for an
    ///   object, as `Predicate.evaluate` throws it on an array of the models.
    @inlinable
    public func filter(_ predicate: Predicate<Model>) throws -> Results<Model> {
        // Inlined where `Model` is known, so that taking the predicate apart and keeping it look
        // up no `Predicate<Model>` metadata: out of line, that was three lookups per query.
        try filter(expression: predicate.expression, root: predicate.variable.key, variable: predicate.variable)
    }

    /// ``filter(_:)`` with its predicate taken apart: `variable` is its
    /// `PredicateExpressions.Variable<Model>`, whose key is `root`. The parts are handed over,
    /// as the caller's copies of them, to the condition that keeps them: lent, each was copied again.
    @usableFromInline
    func filter(
        expression: consuming any StandardPredicateExpression<Bool>, root: PredicateExpressions.VariableID, variable: consuming any Sendable
    ) throws -> Results<Model> {
        let node = try PredicateTranslator(registry: source.registry).translate(expression)
        return try filter(QueryCondition(expression: expression, variable: variable, node: node, root: root))
    }

    /// The results that also satisfy `condition`, planned and run as a predicate's translation is.
    func filter(_ condition: consuming QueryCondition) throws -> Results<Model> {
        // Results made by filters alone: their conditions, which will end with this one, are their steps.
        var steps = state.sortingSteps
        steps?.append(.filter(copy condition))
        return Results(source: source, state: try filtered(condition, sortingSteps: steps))
    }

    /// Results of what `step` found from these, remembering every step that made them.
    private func recording(_ step: ResultsStep, in found: Found) -> Results<Model> {
        var steps = state.steps
        steps.append(step)
        return Results(source: source, state: ResultsState(conditions: found.conditions, rows: found.rows, plan: found.plan, sortingSteps: steps))
    }

    /// The state of these results filtered by `condition` as well, made by `sortingSteps`. Made
    /// here from what the filter found, rather than passed on in a ``Found``: copying that into
    /// the state and freeing it cost a twentieth of a lookup by an indexed value.
    private func filtered(_ condition: consuming QueryCondition, sortingSteps: [ResultsStep]?) throws -> ResultsState {
        // The first filter's condition is planned from its node, with no copy of it out of the
        // list; the condition then moves into the list, not copied.
        let all: [QueryCondition]
        let access: AccessPath
        if conditions.isEmpty, !condition.node.isConjunction {
            access = QueryPlanner(source: source).accessPath(soleConjunct: condition.node, root: condition.root)
            // A list made at its size: appending to an empty one grows it through the general path.
            all = [condition]
        } else {
            var more = conditions
            more.append(condition)
            all = more
            access = QueryPlanner(source: source).accessPath(for: all)
        }
        // Compiled once, here: the plan reports it, and the scan or the test of an index's
        // candidates runs it.
        let byteTests: ByteConditions? = access.isExact ? nil : ByteConditions(conditions: all.map { ($0.node, $0.root) }, schema: source.schema)
        let filter: QueryPlan.Filter = if access.isExact {
            .none
        } else if !all.allSatisfy(\.node.isFullyTranslated) {
            .recordsThenModels
        } else if byteTests != nil {
            .storedBytes
        } else {
            .records
        }
        // An index range that is the whole answer stays in the index until a position is read.
        if access.isExact, plan.order == .primaryKey, case .index(let range) = access.source,
           let order = access.order, order.allSatisfy({ IndexKeys.ordersExactly($0.kind) }) {
            return ResultsState(conditions: all, rows: .range(try IndexRange(range, order: order)),
                                plan: QueryPlan(accessSource: access.planAccess(typeName: source.plan.typeName), filter: filter, order: .primaryKey), sortingSteps: sortingSteps)
        }
        let found = try QueryExecution<Model>(source: source, conditions: all, byteTests: byteTests).matchingKeys(access)
        guard plan.order != .primaryKey else {
            return ResultsState(conditions: all, rows: .keys(found), plan: QueryPlan(accessSource: access.planAccess(typeName: source.plan.typeName), filter: filter, order: .primaryKey),
                                sortingSteps: sortingSteps)
        }
        // A filter keeps the order the results had: the matches, picked from these results in turn.
        var positions: [StorageKey: Int] = [:]
        for (position, key) in found.keys.enumerated() { positions[key] = position }
        return ResultsState(conditions: all, rows: .keys(found.picked(try allKeys.compactMap { positions[$0] })),
                            plan: QueryPlan(accessSource: access.planAccess(typeName: source.plan.typeName), filter: filter, order: plan.order), sortingSteps: sortingSteps)
    }

    // MARK: Sorting

    /// The results sorted by one descriptor: `SortDescriptor(\.name)`.
    ///
    /// - Throws: ``QueryError`` for a sort on an ignored property; ``StoreError`` or
    ///   ``MappingError`` when a record cannot be read.
    public func sorted(using descriptor: SortDescriptor<Model>) throws -> Results<Model> {
        // One descriptor on a stored property is resolved alone: no array of descriptors is made.
        if case .key(let key) = try SortResolution.resolve(descriptor, schema: source.schema, schemas: source.registry),
           key.readsStoredProperty {
            return try sorted(onStoredProperties: [key])
        }
        return try sorted(by: [descriptor])
    }

    /// The results sorted by several descriptors, the first deciding most; equal objects keep
    /// the order they had, as with `Array.sorted(using:)`.
    ///
    /// - Throws: ``QueryError`` for a sort on an ignored property; ``StoreError`` or
    ///   ``MappingError`` when a record cannot be read.
    public func sorted(using descriptors: [SortDescriptor<Model>]) throws -> Results<Model> {
        try sorted(by: descriptors)
    }

    /// The results sorted by a stored property named at run time, for code that does not know
    /// the model's key paths: values in Swift's `<` order (strings too, and an enum that is
    /// `Comparable` by its own `<`; one that is not, by its raw values), `nil` first; equal
    /// objects keep the order they had.
    ///
    /// - Throws: ``QueryError`` for a property the model does not store, an ignored property, or
    ///   values with no order (links, containers, data).
    public func sorted(byProperty name: String, ascending: Bool = true) throws -> Results<Model> {
        let key = try SortResolution.recordKey(named: name, ascending: ascending, schema: source.schema)
        guard let order = PropertyOrder(of: Model.self, property: name) else {
            // A stored property's value is always read: only a path can leave it to the models.
            guard let found = try sorted(onRecords: [key]) else {
                throw QueryError(.unsortableProperty(typeName: source.schema.typeName, property: name, kind: key.kind.description))
            }
            return recording(.sortByProperty(name, ascending: ascending), in: found)
        }
        let keys = try sortModels(allKeys) { lhs, rhs in
            let forward = order.compare(lhs, rhs)
            return ascending ? forward : (forward == .orderedSame ? forward : (forward == .orderedAscending ? .orderedDescending : .orderedAscending))
        }
        return recording(.sortByProperty(name, ascending: ascending), in: Found(conditions: conditions, rows: .keys(FoundKeys(keys)), plan: plan.ordered(.models)))
    }

    private func sorted(by descriptors: [SortDescriptor<Model>]) throws -> Results<Model> {
        if case .records(let sortKeys) = try SortResolution.resolve(descriptors, schema: source.schema, schemas: source.registry) {
            if sortKeys.allSatisfy(\.readsStoredProperty) { return try sorted(onStoredProperties: sortKeys) }
            if let found = try sorted(onRecords: sortKeys) { return recording(.sort(descriptors), in: found) }
        }
        let found = Found(conditions: conditions, rows: .keys(FoundKeys(try sortModels(allKeys, by: descriptors))), plan: plan.ordered(.models))
        return recording(.sort(descriptors), in: found)
    }

    /// The results sorted by keys that read the model's own stored properties, which records
    /// always hold (only a path can leave a value to the models).
    private func sorted(onStoredProperties sortKeys: [RecordSortKey]) throws -> Results<Model> {
        guard let found = try sorted(onRecords: sortKeys) else {
            let key = sortKeys.first { !$0.readsStoredProperty } ?? sortKeys.first
            throw QueryError(.unsortableProperty(typeName: source.schema.typeName, property: key?.property ?? "", kind: key?.kind.description ?? ""))
        }
        return recording(.sortOnRecords(sortKeys), in: found)
    }

    /// The results sorted by a string property folded as `key` says (see `ResultsTextSearch.swift`).
    func sorted(folded key: RecordSortKey) throws -> Results<Model> {
        // A stored property's value is always read: only a path can leave it to the models.
        guard let found = try sorted(onRecords: [key]) else {
            throw QueryError(.unsortableProperty(typeName: source.schema.typeName, property: key.property, kind: key.kind.description))
        }
        return recording(.sortFolded(key), in: found)
    }

    /// The results sorted by values read from records, or `nil` when a path reads a value only
    /// the model knows (a link that is not optional, to a deleted object).
    private func sorted(onRecords sortKeys: [RecordSortKey]) throws -> Found? {
        if !sortKeys.isEmpty, let byIndex = try indexOrdered(by: sortKeys) ?? indexRangeOrdered(by: sortKeys) ?? indexWalked(by: sortKeys) {
            return byIndex
        }
        let order: QueryPlan.Order = sortKeys.isEmpty ? plan.order : .records(properties: sortKeys.map(\.property))
        guard let found = try sortOnRecords(foundKeys, by: sortKeys) else { return nil }
        return Found(conditions: conditions, rows: .keys(found), plan: plan.ordered(order))
    }

    /// The results in the order of the index on the sort keys' properties (the property's own, or
    /// a compound index on exactly those properties, in order), when that order is the
    /// descriptors' and the results are every object of the type in key order.
    private func indexOrdered(by keys: [RecordSortKey]) -> Found? {
        guard conditions.isEmpty, plan.order == .primaryKey, let ascending = keys.first?.ascending,
              keys.allSatisfy({ $0.readsStoredProperty && $0.ascending == ascending && $0.stringComparator == nil && IndexKeys.ordersExactly($0.kind) })
        else { return nil }
        // By position, from the indexes the source found once: no index name made and looked up.
        let positions = keys.compactMap { key -> Int? in
            if case .stored(let position) = key.reading { return position }
            return nil
        }
        let found: TypeIndexes.Index?
        if keys.count == 1, keys[0].folding == .insensitive {
            found = source.indexes.folded(positions[0])
        } else if keys.allSatisfy({ $0.folding.isEmpty }) {
            found = keys.count == 1 ? source.indexes[positions[0]] : source.indexes.compound.first { $0.positions == positions }?.index
        } else {
            return nil
        }
        guard let index = found else { return nil }
        let order = QueryPlan.Order.index(name: index.name, ascending: ascending)
        // Descending: groups of equal values in reverse, each group still in key order.
        return Found(conditions: conditions, rows: .index(index.snapshot.positions(ascending: ascending)), plan: plan.ordered(order))
    }

    /// Filtered results in the order of the index range their filter read, when that index
    /// answered the filter exactly and orders by the sort keys' properties (those of a compound
    /// index after its equalities), all in one direction: the range, read in order (its groups
    /// of equal values in reverse for a descending sort), is already sorted (equal values in key
    /// order), so no record is read.
    private func indexRangeOrdered(by keys: [RecordSortKey]) throws -> Found? {
        guard case .range(let range) = rows, range.properties == keys.map(\.orderName), let ascending = keys.first?.ascending,
              keys.allSatisfy({ $0.readsStoredProperty && $0.ascending == ascending && $0.stringComparator == nil }) else { return nil }
        return Found(conditions: conditions, rows: .keys(FoundKeys(try range.keysInIndexOrder(ascending: ascending))),
                     plan: plan.ordered(.index(name: range.indexName, ascending: ascending)))
    }

    /// Filtered results that an index range answers exactly, sorted by one other indexed
    /// property: read by walking that property's index in the sort's direction and keeping the
    /// range's objects (``IndexSortWalk``), when a screen of them is expected to cost less that
    /// way; otherwise `nil`, and the range is read and sorted.
    private func indexWalked(by keys: [RecordSortKey]) -> Found? {
        guard case .range(let range) = rows, keys.count == 1, let key = keys.first, key.readsStoredProperty,
              key.stringComparator == nil, key.folding.isEmpty, IndexKeys.ordersExactly(key.kind),
              case .stored(let position) = key.reading, let index = source.indexes[position], index.name != range.indexName
        else { return nil }
        let objects = source.snapshot.count(type: source.plan.typeName)
        // One entry per object, or the walk would miss some.
        guard index.snapshot.count == objects else { return nil }
        let nodes = conditions.map { ($0.node, $0.root) }
        guard let membership = IndexSortWalk.choice(matches: range.count, objects: objects,
                                                    testsBytes: ByteConditions(conditions: nodes, schema: source.schema) != nil)
        else { return nil }
        let walk = IndexSortWalk(range: range, sortKey: key, sortIndex: index.snapshot,
                                 membership: membership, conditions: nodes, schema: source.schema, values: source.values)
        return Found(conditions: conditions, rows: .walk(walk),
                     plan: plan.ordered(.indexWalk(name: index.name, ascending: key.ascending), filter: membership == .testingRecords ? .storedBytes : .none))
    }

    /// Every result of rows that walk an index, in order, read another way: the filter's range
    /// read from its index, in key order, and sorted on records.
    private func sortedRange(of walk: IndexSortWalk) throws -> FoundKeys {
        let keys = try walk.range.keysInIndexOrder
        guard let sorted = try sortOnRecords(FoundKeys(keys.count < 2 ? keys : keys.sorted(by: StorageKey.precedes)), by: [walk.sortKey]) else {
            throw QueryError(.unsortableProperty(typeName: source.schema.typeName, property: walk.sortKey.property, kind: walk.sortKey.kind.description))
        }
        return sorted
    }

    /// `found` sorted by values read from their records, each record read at its location when
    /// the filter kept it and kept with its location for reading the sorted results; `nil` as
    /// for ``sorted(onRecords:)``.
    private func sortOnRecords(_ found: FoundKeys, by sortKeys: [RecordSortKey]) throws -> FoundKeys? {
        guard !sortKeys.isEmpty else { return found }
        let reads = sortKeys.map { key in
            switch key.reading {
            case .stored(let position):
                let root = PredicateExpressions.Variable<Model>().key
                return (QueryNode.member(.variable(root), property: key.property, position: position, typeName: source.schema.typeName), root)
            case .path(let node, let root): return (node, root)
            }
        }
        let records = RecordConditions(schema: source.schema, conditions: reads, snapshot: source.snapshot, schemas: source.registry)
        let keys = found.keys
        // The keys read, in their order, with where their records lie; a row's offset is its place here.
        var read = FoundKeys.reading(capacity: keys.count)
        var rows: [(offset: Int, values: [QueryValue])] = []
        rows.reserveCapacity(keys.count)
        for (place, key) in keys.enumerated() {
            guard let location = try found.location(at: place) ?? source.values.location(for: key) else { continue }
            let bytes = try source.values.value(at: location)
            let stored = try records.values(bytes, key: key)
            var values: [QueryValue] = []
            values.reserveCapacity(sortKeys.count)
            for (index, sortKey) in sortKeys.enumerated() {
                switch sortKey.reading {
                case .stored(let position): values.append(stored[position])
                case .path:
                    guard let value = try records.value(index, for: .embedded(source.schema, stored), key: key) else { return nil }
                    values.append(value)
                }
            }
            rows.append((read.keys.count, values))
            read.append(key, at: location)
        }
        rows.sort { lhs, rhs in
            for index in sortKeys.indices {
                switch sortKeys[index].order(lhs.values[index], rhs.values[index]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.offset < rhs.offset
        }
        return read.picked(rows.map(\.offset))
    }

    private func sortModels(_ keys: [StorageKey], by descriptors: [SortDescriptor<Model>]) throws -> [StorageKey] {
        let comparator = SortDescriptorChain(descriptors: descriptors)
        return try sortModels(keys, by: comparator.compare)
    }

    private func sortModels(_ keys: [StorageKey], by compare: (Model, Model) -> ComparisonResult) throws -> [StorageKey] {
        let reader = source.reader()
        var rows: [(key: StorageKey, model: Model)] = []
        for key in keys {
            if let model = try reader.model(Model.self, key: key) { rows.append((key, model)) }
        }
        // Equal models keep the order they had, as `Array.sorted(using:)` keeps it.
        return rows.enumerated().sorted { lhs, rhs in
            switch compare(lhs.element.model, rhs.element.model) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: lhs.offset < rhs.offset
            }
        }.map(\.element.key)
    }
}

/// Several descriptors applied in turn, the first deciding most.
private struct SortDescriptorChain<Model> {
    let descriptors: [SortDescriptor<Model>]

    func compare(_ lhs: Model, _ rhs: Model) -> ComparisonResult {
        for descriptor in descriptors {
            let order = descriptor.compare(lhs, rhs)
            if order != .orderedSame { return order }
        }
        return .orderedSame
    }
}

/// What a filter or sort found, before it becomes results that remember how they were made.
/// Not nested in the generic `Results`: unspecialised code would look its metadata up per query.
private struct Found {
    let conditions: [QueryCondition]
    let rows: ResultsRows
    let plan: QueryPlan
}
