import Testing
@testable import MirrorStore

@Suite("Identity map")
struct IdentityMapTests {
    @Test("finds every inserted object, across growth, and nothing else")
    func insertAndFind() {
        let objects = (0..<1_000).map { _ in Node() }
        let strangers = (0..<100).map { _ in Node() }
        var map = IdentityMap<Node>()
        #expect(map[FieldMemory.address(of: objects[0])] == nil)
        for (index, object) in objects.enumerated() {
            map.insert(object, for: FieldMemory.address(of: object))
            #expect(map[FieldMemory.address(of: objects[index / 2])] === objects[index / 2])
        }
        #expect(objects.allSatisfy { map[FieldMemory.address(of: $0)] === $0 })
        #expect(strangers.allSatisfy { map[FieldMemory.address(of: $0)] == nil })
    }
}
