import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The lock-free bitmap of checked blocks against a plain set, alone and with threads marking
/// blocks at once.
@Suite struct CheckedBlocksTests {
    @Test("marks and counts as a set does, at every size around a word's", arguments: [0, 1, 63, 64, 65, 130, 1_000])
    func matchesASet(count: Int) {
        var random = SeededRandom(seed: 20_261_127 &+ UInt64(count))
        let checked = CheckedBlocks(count: count)
        var reference = Set<Int>()
        #expect(checked.isComplete == (count == 0))
        for _ in 0..<(3 * count + 10) {
            let index = Int.random(in: -2...(count + 2), using: &random)
            let inside = index >= 0 && index < count
            #expect(checked.contains(index) == reference.contains(index))
            if inside { reference.insert(index) }
            #expect(checked.insert(index) == reference.count)
            #expect(checked.contains(index) == inside)
            #expect(checked.isComplete == (reference.count == count))
        }
        for index in 0..<count { checked.insert(index) }
        #expect(checked.isComplete)
        #expect((0..<count).allSatisfy(checked.contains))
        #expect(!checked.contains(count) && !checked.contains(-1))
    }

    @Test("threads marking overlapping blocks at once count each block once")
    func concurrentMarks() async {
        let count = 4_099
        let checked = CheckedBlocks(count: count)
        let counts = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    var last = 0
                    // Every thread covers every block, starting at a different place.
                    for step in 0..<count { last = max(last, checked.insert((step * 7 + thread * 513) % count)) }
                    return last
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts.max() == count)
        #expect(checked.isComplete)
        #expect((0..<count).allSatisfy(checked.contains))
    }
}
