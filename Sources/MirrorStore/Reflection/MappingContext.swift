/// What one model → record conversion has seen: each class instance becomes exactly one record, so
/// shared references stay shared and cycles end.
struct EncodingContext {
    var records: [UnsafeRawPointer: ManagedObject] = [:]
}

/// What one record → model conversion has built: each record becomes exactly one class instance.
struct DecodingContext {
    var instances: [ObjectIdentifier: AnyObject] = [:]
}
