import Foundation
import Synchronization

/// The process-wide cache of type plans, keyed by model type.
///
/// Lookups take a short lock. Building takes a second, recursive lock, so each type is built once
/// even when many threads meet it at the same moment, and a model whose `primaryKey` (user code)
/// itself converts a model does not deadlock.
final class PlanCache: Sendable {
    static let shared = PlanCache()

    private let plans = Mutex<[ObjectIdentifier: TypePlan]>([:])
    private let building = NSRecursiveLock()

    func plan(for type: any Persistable.Type) throws(MappingError) -> TypePlan {
        let identifier = ObjectIdentifier(type)
        if let plan = plans.withLock({ $0[identifier] }) { return plan }
        building.lock()
        defer { building.unlock() }
        var factory = CodecFactory(plans: plans.withLock { $0 })
        do {
            let plan = try factory.plan(for: type)
            plans.withLock { published in
                for plan in factory.newPlans { published[plan.typeIdentifier] = plan }
            }
            return plan
        } catch {
            // Plans of recursive types refer to themselves through their codecs: unpublished ones
            // must let go of their fields to be freed.
            for plan in factory.newPlans { plan.discard() }
            throw error
        }
    }
}
