import Testing
@testable import MirrorStore

@Suite("Identity map")
struct IdentityMapTests {
    @Test("finds every inserted object, across growth, and nothing else", arguments: [false, true])
    func insertAndFind(holdsValues: Bool) {
        let objects = (0..<1_000).map { _ in Node() }
        let strangers = (0..<100).map { _ in Node() }
        var map = IdentityMap<Node>(holdsValues: holdsValues)
        #expect(map[FieldMemory.address(of: objects[0])] == nil)
        for (index, object) in objects.enumerated() {
            map.insert(object, for: FieldMemory.address(of: object))
            #expect(map[FieldMemory.address(of: objects[index / 2])] === objects[index / 2])
        }
        #expect(objects.allSatisfy { map[FieldMemory.address(of: $0)] === $0 })
        #expect(strangers.allSatisfy { map[FieldMemory.address(of: $0)] == nil })
    }

    @Test("a map serving several conversions keeps its objects alive; one serving a single conversion does not")
    func holdingObjects() {
        var holding = IdentityMap<Node>(holdsValues: true)
        var referring = IdentityMap<Node>(holdsValues: false)
        weak var heldObject: Node?
        weak var referredObject: Node?
        do {
            let held = Node()
            let referred = Node()
            heldObject = held
            referredObject = referred
            holding.insert(held, for: FieldMemory.address(of: held))
            referring.insert(referred, for: FieldMemory.address(of: referred))
        }
        #expect(heldObject != nil)
        #expect(referredObject == nil)
        #expect(holding.holdsValues && !referring.holdsValues)
    }
}
