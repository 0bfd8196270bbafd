import Synchronization

/// The process-wide cache of type plans, keyed by model type.
///
/// Plans are built outside the lock (building asks the model for its `primaryKey` and friends, which
/// is user code) and published under it. Two threads racing on a new type may both build it; the
/// first to publish wins and the other's copy is dropped, so every caller sees one plan per type.
final class PlanCache: Sendable {
    static let shared = PlanCache()

    private let plans = Mutex<[ObjectIdentifier: TypePlan]>([:])

    func plan(for type: any Persistable.Type) throws(MappingError) -> TypePlan {
        let identifier = ObjectIdentifier(type)
        if let plan = plans.withLock({ $0[identifier] }) { return plan }
        var factory = CodecFactory(plans: plans.withLock { $0 })
        let built = try factory.plan(for: type)
        return plans.withLock { published in
            for plan in factory.newPlans where published[plan.typeIdentifier] == nil {
                published[plan.typeIdentifier] = plan
            }
            return published[identifier] ?? built
        }
    }
}
