import Testing
@testable import MirrorStoreEngine

/// Random nonces counted against the per-key limit.
@Suite struct NonceBudgetTests {
    @Test func theLimitIsNISTs() {
        let budget = NonceBudget()
        #expect(NonceBudget.randomNonceLimit == 4_294_967_296)
        #expect(budget.limit == NonceBudget.randomNonceLimit)
        #expect(budget.used == 0)
        #expect(budget.remaining == NonceBudget.randomNonceLimit)
        #expect(NonceBudget(limit: .max).limit == NonceBudget.randomNonceLimit, "a larger limit is capped")
    }

    @Test func noncesAreFreshAndCounted() throws {
        var budget = NonceBudget()
        var seen = Set<[UInt8]>()
        for count in 1...10_000 {
            let nonce = try budget.nextNonce()
            #expect(nonce.count == 12)
            seen.insert(nonce)
            #expect(budget.used == UInt64(count))
        }
        #expect(seen.count == 10_000)
        #expect(budget.remaining == NonceBudget.randomNonceLimit - 10_000)
    }

    @Test func aSpentBudgetRefusesAndCountsNoMore() throws {
        var budget = NonceBudget(limit: 3)
        for _ in 0..<3 { _ = try budget.nextNonce() }
        #expect(budget.isExhausted)
        #expect(budget.remaining == 0)
        #expect(throws: StorageError(.nonceLimitReached(limit: 3))) { try budget.nextNonce() }
        #expect(budget.used == 3)
    }

    @Test func theLastNonceUnderTheRealLimit() throws {
        var budget = NonceBudget(used: NonceBudget.randomNonceLimit - 1)
        #expect(budget.remaining == 1)
        _ = try budget.nextNonce()
        #expect(throws: StorageError(.nonceLimitReached(limit: NonceBudget.randomNonceLimit))) { try budget.nextNonce() }
    }

    /// A count carried across opens may be damaged: above the limit it leaves nothing, no trap.
    @Test func aCountAboveTheLimitLeavesNothing() {
        for used: UInt64 in [NonceBudget.randomNonceLimit, NonceBudget.randomNonceLimit + 1, .max] {
            var budget = NonceBudget(used: used)
            #expect(budget.isExhausted)
            #expect(budget.remaining == 0)
            #expect(throws: StorageError(.nonceLimitReached(limit: NonceBudget.randomNonceLimit))) { try budget.nextNonce() }
        }
    }
}
