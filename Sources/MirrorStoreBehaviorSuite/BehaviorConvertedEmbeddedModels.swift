import MirrorStore

// Two versions of a meter whose embedded gauge changes a property's kind beyond the automatic
// rules: what ``BehaviorCheck/migrations`` converts with migration blocks.

/// Version 1 of an embedded gauge, stored as `BehaviorGauge`, whose reading is text.
public struct BehaviorGaugeOne: Persistable, Equatable, Sendable {
    /// A reading, which version 2 makes an `Int`: a kind no automatic rule converts.
    public var reading = ""
    /// Both versions are stored as `BehaviorGauge`.
    public static var persistedTypeName: String { "BehaviorGauge" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this reading.
    public init(reading: String) { self.reading = reading }
}

/// Version 2 of `BehaviorGauge`: its reading an `Int`, which a migration block converts.
public struct BehaviorGaugeTwo: Persistable, Equatable, Sendable {
    /// The reading of version 1, converted by the migration's block.
    public var reading = 0
    /// Both versions are stored as `BehaviorGauge`.
    public static var persistedTypeName: String { "BehaviorGauge" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this reading.
    public init(reading: Int) { self.reading = reading }
}

/// Version 1 of a meter, stored as `BehaviorMeter`, with one gauge embedded.
public struct BehaviorMeterOne: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The gauge.
    public var gauge = BehaviorGaugeOne()
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorMeter`.
    public static var persistedTypeName: String { "BehaviorMeter" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, reading: String) {
        self.id = id
        gauge = BehaviorGaugeOne(reading: reading)
    }
}

/// Version 2 of `BehaviorMeter`, with a version 2 gauge.
public struct BehaviorMeterTwo: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The gauge.
    public var gauge = BehaviorGaugeTwo()
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorMeter`.
    public static var persistedTypeName: String { "BehaviorMeter" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, reading: Int) {
        self.id = id
        gauge = BehaviorGaugeTwo(reading: reading)
    }
}
