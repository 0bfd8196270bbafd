import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// A write transaction streams its records once what it holds passes the threshold, weighed as
/// held in memory (`PendingWrites.heldWeight(of:)`: the value's storage as allocated and the
/// overhead of holding it), not by the records' lengths alone: short records once held several
/// times the threshold.
@Suite("Held record bound")
struct HeldRecordBoundTests {
    /// A short record: an integer key and a few small integers.
    final class Tick: Persistable {
        var identifier = 0
        var a: Int16 = 0
        var b: UInt8 = 0
        var flag = false
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    @Test func aValueWeighsItsStorageAndItsOverhead() {
        var value: [UInt8] = [1, 2, 3]
        value.reserveCapacity(1_000)
        #expect(PendingWrites.heldWeight(of: value) >= 1_000 + PendingWrites.heldOverhead)
        #expect(PendingWrites.heldWeight(of: [UInt8](repeating: 0, count: 3)) >= 3 + PendingWrites.heldOverhead)
    }

    @Test(arguments: [16 << 10, 64 << 10])
    func shortRecordsHoldAtMostTheThreshold(threshold: Int) throws {
        let directory = TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.durability = .none
        configuration.transactionStreamingThreshold = threshold
        let store = try Store(path: directory.file("ticks.store"), models: [Tick.self], configuration: configuration)
        let count = 20_000
        let (most, streamed) = try store.write { transaction in
            for identifier in 0..<count {
                let tick = Tick()
                tick.identifier = identifier
                tick.a = Int16(identifier % 1_000)
                tick.b = UInt8(identifier % 200)
                tick.flag = identifier % 3 == 0
                try transaction.add(tick)
            }
            return (transaction.pending.mostHeldBytes, transaction.pending.stream != nil)
        }
        #expect(streamed)
        // One record's weight past the threshold at most: it is written as soon as it passes.
        #expect(most < threshold + 1_024, "held \(most) bytes with a threshold of \(threshold)")
        #expect(try store.objects(Tick.self).count == count)
        #expect(try store.object(Tick.self, primaryKey: count - 1)?.b == UInt8((count - 1) % 200))
    }
}
