import MirrorStoreEngine

/// How a ``Results`` finds and orders its objects: what ``Results/plan`` reports, so a test or a
/// curious user can see whether an index is used.
///
/// ```swift
/// let byName = try store.objects(Hero.self).filter(#Predicate { $0.name == "Thor" })
/// print(byName.plan)   // index Hero.name == "Thor"; order: primary key
/// ```
public struct QueryPlan: Sendable, Equatable, CustomStringConvertible {
    /// Where the candidate objects come from.
    public enum Access: Sendable, Equatable {
        /// Every object of the type is read.
        case scan(typeName: String)
        /// Objects are looked up by primary key.
        case primaryKey(typeName: String, keys: Int)
        /// A range of a secondary index is read; `range` describes it (`== "Thor"`, `>= 3 and < 9`, …).
        case index(name: String, range: String)
        /// The objects linking to some linked objects, read from the link's index (`index`,
        /// such as `Hero.publisher`); `target` says how the linked objects are found.
        case linked(index: String, target: String)

        /// One phrase: what is read.
        var description: String {
            switch self {
            case .scan(let typeName): "scan every \(typeName)"
            case .primaryKey(let typeName, let keys): "\(typeName) by primary key (\(keys) key\(keys == 1 ? "" : "s"))"
            case .index(let name, let range): "index \(name) \(range)"
            case .linked(let index, let target): "index \(index) of the objects found by: \(target)"
            }
        }
    }

    /// How the candidates are tested.
    public enum Filter: Sendable, Equatable {
        /// No test: every candidate matches (no predicate, or the index answers it exactly).
        case none
        /// The predicate is decided on the encoded records.
        case records
        /// The predicate is decided on each record's stored bytes where they lie, without reading
        /// the record into values: a scan, or an index range's candidates, whose conditions
        /// compare the model's own single-value properties with constants or match a string
        /// property's text.
        case storedBytes
        /// The predicate is decided on the encoded records where it can be, and on decoded models
        /// for the rest (a computed property, a function the store does not translate).
        case recordsThenModels
    }

    /// How the results are ordered.
    public enum Order: Sendable, Equatable {
        /// By primary key (generated identities in insertion order).
        case primaryKey
        /// In the order of a secondary index, read without sorting.
        case index(name: String, ascending: Bool)
        /// In the order of a secondary index on another property than the filter's, walked in
        /// that order as far as results are read, keeping the objects of the filter's range (by
        /// testing their stored bytes, ``Filter/storedBytes``, or by listing the range's keys
        /// first, ``Filter/none``); the range's index counts the results. Chosen over reading the
        /// range and sorting it when the first results are expected to cost less that way.
        case indexWalk(name: String, ascending: Bool)
        /// Sorted by the named stored properties, read from the encoded records.
        case records(properties: [String])
        /// Sorted by comparing decoded models (a key path the store cannot read from records).
        case models
    }

    /// Where the candidates come from, as the planner left it: an index range is put into words
    /// when ``access`` is read, not for every query.
    enum AccessSource: Sendable {
        case described(Access)
        case index(name: String, range: RangeText?)

        var access: Access {
            switch self {
            case .described(let access): access
            case .index(let name, let range): .index(name: name, range: range?.description ?? "")
            }
        }
    }

    private let accessSource: AccessSource

    /// Where the candidates come from.
    public var access: Access { accessSource.access }

    /// How the candidates are tested.
    public let filter: Filter
    /// How the results are ordered.
    public let order: Order

    init(access: Access, filter: Filter, order: Order) {
        self.init(accessSource: .described(access), filter: filter, order: order)
    }

    init(accessSource: AccessSource, filter: Filter, order: Order) {
        self.accessSource = accessSource
        self.filter = filter
        self.order = order
    }

    /// The same access and filter in another order.
    func ordered(_ order: Order) -> QueryPlan {
        QueryPlan(accessSource: accessSource, filter: filter, order: order)
    }

    /// The same access in another order, its candidates tested as `filter` says.
    func ordered(_ order: Order, filter: Filter) -> QueryPlan {
        QueryPlan(accessSource: accessSource, filter: filter, order: order)
    }

    /// Plans are equal when they read, test and order alike.
    public static func == (lhs: QueryPlan, rhs: QueryPlan) -> Bool {
        lhs.access == rhs.access && lhs.filter == rhs.filter && lhs.order == rhs.order
    }

    /// The name of the secondary index the plan reads, if any.
    public var indexName: String? {
        if case .index(let name, _) = accessSource { return name }
        if case .described(.index(let name, _)) = accessSource { return name }
        if case .described(.linked(let name, _)) = accessSource { return name }
        if case .index(let name, _) = order { return name }
        if case .indexWalk(let name, _) = order { return name }
        return nil
    }

    /// One line: access; filter; order.
    public var description: String {
        let accessText = access.description
        let filterText = switch filter {
        case .none: "no filter"
        case .records: "filter on records"
        case .storedBytes: "filter on stored bytes"
        case .recordsThenModels: "filter on records, then on models"
        }
        let orderText = switch order {
        case .primaryKey: "order: primary key"
        case .index(let name, let ascending): "order: index \(name)\(ascending ? "" : " descending")"
        case .indexWalk(let name, let ascending): "order: walk index \(name)\(ascending ? "" : " descending"), keeping the filter's objects"
        case .records(let properties): "order: sort by \(properties.joined(separator: ", "))"
        case .models: "order: sort models"
        }
        return "\(accessText); \(filterText); \(orderText)"
    }
}
