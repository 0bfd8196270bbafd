import MirrorStore

// Two versions of a model that embeds another, whose own properties change between them: what
// ``BehaviorCheck/migrations`` migrates without the parent's own properties changing.

/// Version 1 of an embedded parcel (no primary key), stored as `BehaviorParcel`.
public struct BehaviorParcelOne: Persistable, Equatable, Sendable {
    /// A label, which version 2 renames to `title`.
    public var label = ""
    /// A weight, which version 2 narrows to `Int8`.
    public var weight: Int32 = 0
    /// A note, which version 2 removes.
    public var note = ""
    /// A size, which version 2 makes non-optional.
    public var size: Int?
    /// Both versions are stored as `BehaviorParcel`.
    public static var persistedTypeName: String { "BehaviorParcel" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(label: String, weight: Int32, note: String = "", size: Int? = nil) {
        self.label = label
        self.weight = weight
        self.note = note
        self.size = size
    }
}

/// Version 2 of `BehaviorParcel`: `label` renamed to `title`, `weight` an `Int8`, `note` removed,
/// `fragile` added, `size` no longer optional.
public struct BehaviorParcelTwo: Persistable, Equatable, Sendable {
    /// The label of version 1, renamed.
    public var title = ""
    /// The weight of version 1, each value checked to fit.
    public var weight: Int8 = 0
    /// Added in version 2: migrated parcels take this value.
    public var fragile = true
    /// The size of version 1; `nil` there takes this value.
    public var size = 1
    /// Both versions are stored as `BehaviorParcel`.
    public static var persistedTypeName: String { "BehaviorParcel" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(title: String, weight: Int8, fragile: Bool = true, size: Int = 1) {
        self.title = title
        self.weight = weight
        self.fragile = fragile
        self.size = size
    }
}

/// Version 1 of a shipment, stored as `BehaviorShipment`, embedding parcels in every container.
public struct BehaviorShipmentOne: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The main parcel.
    public var main = BehaviorParcelOne()
    /// More parcels, in order.
    public var extra: [BehaviorParcelOne] = []
    /// A spare parcel, if any.
    public var spare: BehaviorParcelOne?
    /// Parcels by name.
    public var byName: [String: BehaviorParcelOne] = [:]
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorShipment`.
    public static var persistedTypeName: String { "BehaviorShipment" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, main: BehaviorParcelOne, extra: [BehaviorParcelOne] = [], spare: BehaviorParcelOne? = nil,
                byName: [String: BehaviorParcelOne] = [:]) {
        self.id = id
        self.main = main
        self.extra = extra
        self.spare = spare
        self.byName = byName
    }
}

/// Version 2 of `BehaviorShipment`: the same properties, of version 2 parcels.
public struct BehaviorShipmentTwo: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The main parcel.
    public var main = BehaviorParcelTwo()
    /// More parcels, in order.
    public var extra: [BehaviorParcelTwo] = []
    /// A spare parcel, if any.
    public var spare: BehaviorParcelTwo?
    /// Parcels by name.
    public var byName: [String: BehaviorParcelTwo] = [:]
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorShipment`.
    public static var persistedTypeName: String { "BehaviorShipment" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, main: BehaviorParcelTwo, extra: [BehaviorParcelTwo] = [], spare: BehaviorParcelTwo? = nil,
                byName: [String: BehaviorParcelTwo] = [:]) {
        self.id = id
        self.main = main
        self.extra = extra
        self.spare = spare
        self.byName = byName
    }
}
