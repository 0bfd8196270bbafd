import MirrorStore

// Three versions of a delivery whose embedded models change their type names: what
// ``BehaviorCheck/migrations`` renames with `renameType(from:to:)`, first alone (a box becomes a
// crate, its lid a cap), then with a change of the renamed model's properties (a crate becomes a
// carton, its label renamed to title, a property added).

/// Version 1 of an embedded lid, stored as `BehaviorLid`.
public struct BehaviorLidOne: Persistable, Equatable, Sendable {
    /// A colour.
    public var color = ""
    /// Stored as `BehaviorLid`, which version 2 renames to `BehaviorCap`.
    public static var persistedTypeName: String { "BehaviorLid" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this colour.
    public init(color: String) { self.color = color }
}

/// Version 1 of an embedded box, stored as `BehaviorBox`, with a lid embedded in it.
public struct BehaviorBoxOne: Persistable, Equatable, Sendable {
    /// A label, which version 3 renames to `title`.
    public var label = ""
    /// A weight.
    public var weight = 0
    /// The box's lid.
    public var lid = BehaviorLidOne()
    /// Stored as `BehaviorBox`, which version 2 renames to `BehaviorCrate`.
    public static var persistedTypeName: String { "BehaviorBox" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(label: String, weight: Int, lid: String = "") {
        self.label = label
        self.weight = weight
        self.lid = BehaviorLidOne(color: lid)
    }
}

/// Version 2 of `BehaviorLid`, renamed `BehaviorCap`, its properties unchanged.
public struct BehaviorCapTwo: Persistable, Equatable, Sendable {
    /// The colour of version 1.
    public var color = ""
    /// Stored as `BehaviorCap` from version 2 on.
    public static var persistedTypeName: String { "BehaviorCap" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this colour.
    public init(color: String) { self.color = color }
}

/// Version 2 of `BehaviorBox`, renamed `BehaviorCrate`, its properties unchanged.
public struct BehaviorCrateTwo: Persistable, Equatable, Sendable {
    /// The label of version 1.
    public var label = ""
    /// The weight of version 1.
    public var weight = 0
    /// The lid of version 1, renamed too.
    public var lid = BehaviorCapTwo()
    /// Stored as `BehaviorCrate` in version 2.
    public static var persistedTypeName: String { "BehaviorCrate" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(label: String, weight: Int, lid: String = "") {
        self.label = label
        self.weight = weight
        self.lid = BehaviorCapTwo(color: lid)
    }
}

/// Version 3 of `BehaviorCrate`, renamed `BehaviorCarton`: `label` renamed to `title`,
/// `fragile` added.
public struct BehaviorCartonThree: Persistable, Equatable, Sendable {
    /// The label of version 2, renamed.
    public var title = ""
    /// The weight of version 2.
    public var weight = 0
    /// Added in version 3: migrated cartons take this value.
    public var fragile = true
    /// The cap of version 2.
    public var lid = BehaviorCapTwo()
    /// Stored as `BehaviorCarton` in version 3.
    public static var persistedTypeName: String { "BehaviorCarton" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(title: String, weight: Int, fragile: Bool = true, lid: String = "") {
        self.title = title
        self.weight = weight
        self.fragile = fragile
        self.lid = BehaviorCapTwo(color: lid)
    }
}

/// Version 1 of a delivery, stored as `BehaviorDelivery` in every version, embedding boxes in every container.
public struct BehaviorDeliveryOne: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The main item.
    public var main = BehaviorBoxOne()
    /// More items, in order.
    public var extra: [BehaviorBoxOne] = []
    /// A spare item, if any.
    public var spare: BehaviorBoxOne?
    /// Items by name.
    public var byName: [String: BehaviorBoxOne] = [:]
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Every version is stored as `BehaviorDelivery`.
    public static var persistedTypeName: String { "BehaviorDelivery" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, main: BehaviorBoxOne, extra: [BehaviorBoxOne] = [], spare: BehaviorBoxOne? = nil, byName: [String: BehaviorBoxOne] = [:]) {
        self.id = id
        self.main = main
        self.extra = extra
        self.spare = spare
        self.byName = byName
    }
}

/// Version 2 of `BehaviorDelivery`: the same properties, of crates.
public struct BehaviorDeliveryTwo: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The main item.
    public var main = BehaviorCrateTwo()
    /// More items, in order.
    public var extra: [BehaviorCrateTwo] = []
    /// A spare item, if any.
    public var spare: BehaviorCrateTwo?
    /// Items by name.
    public var byName: [String: BehaviorCrateTwo] = [:]
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Every version is stored as `BehaviorDelivery`.
    public static var persistedTypeName: String { "BehaviorDelivery" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, main: BehaviorCrateTwo, extra: [BehaviorCrateTwo] = [], spare: BehaviorCrateTwo? = nil, byName: [String: BehaviorCrateTwo] = [:]) {
        self.id = id
        self.main = main
        self.extra = extra
        self.spare = spare
        self.byName = byName
    }
}

/// Version 3 of `BehaviorDelivery`: the same properties, of cartons.
public struct BehaviorDeliveryThree: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The main item.
    public var main = BehaviorCartonThree()
    /// More items, in order.
    public var extra: [BehaviorCartonThree] = []
    /// A spare item, if any.
    public var spare: BehaviorCartonThree?
    /// Items by name.
    public var byName: [String: BehaviorCartonThree] = [:]
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Every version is stored as `BehaviorDelivery`.
    public static var persistedTypeName: String { "BehaviorDelivery" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, main: BehaviorCartonThree, extra: [BehaviorCartonThree] = [], spare: BehaviorCartonThree? = nil, byName: [String: BehaviorCartonThree] = [:]) {
        self.id = id
        self.main = main
        self.extra = extra
        self.spare = spare
        self.byName = byName
    }
}
