/// Consumes a value so the optimiser cannot delete the work that produced it.
///
/// It lives in its own module, is never inlined and is never optimised, so callers must
/// materialise `value` exactly as written (the same barrier as ordo-one/package-benchmark's).
///
/// ```swift
/// for model in models { blackHole(try model.managedObject()) }
/// ```
@inline(never) @_optimize(none)
public func blackHole<Value>(_ value: Value) {}
