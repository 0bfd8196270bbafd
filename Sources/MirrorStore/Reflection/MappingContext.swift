/// What one model → record conversion has seen: each class instance becomes exactly one record, so
/// shared references stay shared and cycles end.
struct EncodingContext {
    /// Keyed by the instance's address. Serves one conversion, whose result holds every record.
    var records = IdentityMap<ManagedObject>(holdsValues: false)
    /// How many conversions are running one inside the other, through links.
    var depth = 0
}

/// What a record → model conversion has built: each record becomes exactly one class instance.
struct DecodingContext {
    /// Keyed by the record's address.
    var instances: IdentityMap<AnyObject>
    /// How many conversions are running one inside the other, through links.
    var depth = 0
    /// Reads inverse relationships during a store read; `nil` elsewhere, where they stay empty.
    /// Weak: the store's reader owns the context that points back at it.
    weak var inverseResolver: (any InverseResolver)?
    /// The inverses this conversion has read so far.
    var inverses = InverseState()
    /// Values a container decoded and then dropped (a `Set` keeps one of equal elements): kept
    /// until the context ends, since `instances` may refer to the objects in them without holding
    /// them.
    private(set) var discarded: [Any] = []

    /// `spansConversions`: whether the context serves more than one conversion (a store reader's
    /// does), so its identity map must hold the instances it made.
    init(spansConversions: Bool = false) {
        instances = IdentityMap(holdsValues: spansConversions)
    }

    /// Keeps a decoded value that its container dropped alive for the rest of the context.
    mutating func keep(discarded value: Any) {
        discarded.append(value)
    }
}
