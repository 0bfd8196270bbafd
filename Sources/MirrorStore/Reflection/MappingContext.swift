/// What one model → record conversion has seen: each class instance becomes exactly one record, so
/// shared references stay shared and cycles end.
struct EncodingContext {
    /// Keyed by the instance's address. Serves one conversion, whose result holds every record.
    var records = IdentityMap<ManagedObject>(holdsValues: false)
    /// How many conversions are running one inside the other, through links.
    var depth = 0
    /// Records made past ``NestedConversion/recursionLimit`` and not yet filled, with the
    /// instances they are made from (which the model being converted holds).
    var unfilled: [(record: ManagedObject, instance: UnsafeRawPointer, plan: TypePlan)] = []
}

/// What a record → model conversion has built: each record becomes exactly one class instance.
struct DecodingContext {
    /// Keyed by the record's address, which identifies the record only while it lives: see
    /// ``remember(_:madeFrom:)``.
    private(set) var instances: IdentityMap<AnyObject>
    /// The records `instances` is keyed by, for a context whose records may end before it does;
    /// `nil` when the caller's record graph holds them all.
    private var heldRecords: [ManagedObject]?
    /// How many conversions are running one inside the other, through links.
    var depth = 0
    /// Reads inverse relationships during a store read; `nil` elsewhere, where they stay empty.
    /// Weak: the store's reader owns the context that points back at it.
    weak var inverseResolver: (any InverseResolver)?
    /// The inverses this conversion has read so far.
    var inverses = InverseState()
    /// Class instances made past ``NestedConversion/recursionLimit`` and not yet filled.
    var unfilled: [(instance: AnyObject, record: ManagedObject, plan: TypePlan)] = []
    /// Values a container decoded and then dropped (a `Set` keeps one of equal elements): kept
    /// until the context ends, since `instances` may refer to the objects in them without holding
    /// them.
    private(set) var discarded: [Any] = []

    /// `spansConversions`: whether the context serves more than one conversion (a store reader's
    /// does), so its identity map must hold the instances it made.
    ///
    /// `holdsRecords`: whether records may be released before the context ends, so it must hold
    /// them: a store reader's are, and so is every record a decoder hands a ``ModelFieldSink``,
    /// dropped once its field is written. Another record could then be made at a released one's
    /// address and be taken for it (two embedded values of one type read as the first).
    init(spansConversions: Bool = false, holdsRecords: Bool = false) {
        instances = IdentityMap(holdsValues: spansConversions)
        heldRecords = spansConversions || holdsRecords ? [] : nil
    }

    /// The instance made from `record`, should the conversion meet it again.
    mutating func remember(_ instance: AnyObject, madeFrom record: ManagedObject) {
        instances.insert(instance, for: FieldMemory.address(of: record))
        heldRecords?.append(record)
    }

    /// What ``startIdentityScope()`` set aside, for ``endIdentityScope(restoring:)`` to put back.
    struct OuterScope {
        fileprivate let instances: IdentityMap<AnyObject>
        fileprivate let unfilled: [(instance: AnyObject, record: ManagedObject, plan: TypePlan)]
    }

    /// Starts a scope in which no instance made before it is found again (see ``InverseFilling``).
    /// Instances made in the scope must be filled before it ends (``ModelMapping/fillUnfilled(_:)``),
    /// with the scope's identities; those made before it are filled after it.
    mutating func startIdentityScope() -> OuterScope {
        let outer = OuterScope(instances: instances, unfilled: unfilled)
        instances = IdentityMap(holdsValues: instances.holdsValues)
        unfilled = []
        return outer
    }

    mutating func endIdentityScope(restoring outer: OuterScope) {
        instances = outer.instances
        unfilled = outer.unfilled
    }

    /// The instance already made from `record`, if any.
    mutating func instance(madeFrom record: ManagedObject) -> AnyObject? {
        instances[FieldMemory.address(of: record)]
    }

    /// Keeps a decoded value that its container dropped alive for the rest of the context.
    mutating func keep(discarded value: Any) {
        discarded.append(value)
    }
}
