import Foundation
import MirrorStoreEngine

/// The process-wide cache of type plans, keyed by model type. Plans are kept for the life of the
/// process.
///
/// A lookup first checks the most recently used plan without a lock (conversions usually repeat
/// one type), then the table under a short lock. Building takes a second, recursive lock, so each
/// type is built once even when many threads meet it at the same moment, and a model whose
/// `primaryKey` (user code) itself converts a model does not deadlock. The table lock is the
/// engine's `Lock`; the building lock is an `NSRecursiveLock`, the one lock here that a thread
/// takes again while holding it, which `Lock` (a plain `pthread_mutex`) would deadlock on.
final class PlanCache: Sendable {
    static let shared = PlanCache()

    private let plans = Lock<[ObjectIdentifier: TypePlan]>([:])
    private let building = NSRecursiveLock()
    private let lastUsed = LastPlanSlot()

    func plan(for type: any Persistable.Type) throws(MappingError) -> TypePlan {
        let identifier = ObjectIdentifier(type)
        if let plan = lastUsed.plan(for: identifier) { return plan }
        if let plan = published(identifier) {
            lastUsed.remember(plan)
            return plan
        }
        building.lock()
        defer { building.unlock() }
        if let plan = published(identifier) { return plan }
        var factory = CodecFactory(plans: plans.withLock { $0 })
        do {
            let plan = try factory.plan(for: type)
            // Inverses name properties of other plans, which are all complete only now.
            for plan in factory.newPlans { try plan.checkInverses() }
            plans.withLock { plans in
                for plan in factory.newPlans { plans[plan.typeIdentifier] = plan }
            }
            return plan
        } catch {
            // Plans of recursive types refer to themselves through their codecs: unpublished ones
            // must let go of their fields to be freed.
            for plan in factory.newPlans { plan.discard() }
            throw error
        }
    }

    private func published(_ identifier: ObjectIdentifier) -> TypePlan? {
        plans.withLock { $0[identifier] }
    }
}
