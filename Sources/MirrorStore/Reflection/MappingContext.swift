/// What one model → record conversion has seen: each class instance becomes exactly one record, so
/// shared references stay shared and cycles end.
struct EncodingContext {
    /// Keyed by the instance's address.
    var records = IdentityMap<ManagedObject>()
    /// How many conversions are running one inside the other, through links.
    var depth = 0
}

/// What one record → model conversion has built: each record becomes exactly one class instance.
struct DecodingContext {
    /// Keyed by the record's address.
    var instances = IdentityMap<AnyObject>()
    /// How many conversions are running one inside the other, through links.
    var depth = 0
    /// Reads inverse relationships during a store read; `nil` elsewhere, where they stay empty.
    /// Weak: the store's reader owns the context that points back at it.
    weak var inverseResolver: (any InverseResolver)?
    /// The inverses this conversion has read so far.
    var inverses = InverseState()
}
