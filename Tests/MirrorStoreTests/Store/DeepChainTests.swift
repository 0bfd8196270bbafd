import Foundation
import Testing
import TestSupport
import MirrorStore

/// A linked list of models with primary keys.
final class ChainNode: Persistable, @unchecked Sendable {
    var identifier = 0
    var next: ChainNode?
    init() {}
    static var primaryKey: String? { "identifier" }

    /// A chain `count` long, head first, built without recursion.
    static func chain(_ count: Int) -> ChainNode {
        let head = ChainNode()
        var tail = head
        for identifier in 1..<count {
            let node = ChainNode()
            node.identifier = identifier
            tail.next = node
            tail = node
        }
        return head
    }

    /// The chain's length, walked without recursion.
    var length: Int {
        var count = 0
        var node: ChainNode? = self
        while let current = node {
            count += 1
            node = current.next
        }
        return count
    }

    /// Unlinks the chain node by node: releasing a long chain at once would recurse once per
    /// node in Swift's own deallocation.
    func dismantle() {
        var node = next
        next = nil
        while let current = node {
            node = current.next
            current.next = nil
        }
    }
}

/// A list of models without primary keys: each is embedded in the one before.
final class EmbeddedNode: Persistable, @unchecked Sendable {
    var value = 0
    var child: EmbeddedNode?
    init() {}

    static func chain(_ count: Int) -> EmbeddedNode {
        let head = EmbeddedNode()
        var tail = head
        for value in 1..<count {
            let node = EmbeddedNode()
            node.value = value
            tail.child = node
            tail = node
        }
        return head
    }

    func dismantle() {
        var node = child
        child = nil
        while let current = node {
            node = current.child
            current.child = nil
        }
    }
}

/// Chains of linked models of any length convert and store without recursing once per link, on
/// tasks too, whose threads have the smallest stacks; embedded chains deeper than a stack can
/// follow end in a typed error, never a crash.
@Suite("Deep chains")
struct DeepChainTests {
    static func isNestingTooDeep(_ error: any Error) -> Bool {
        if let error = error as? MappingError, case .nestingTooDeep = error.kind { return true }
        if let error = error as? StoreError, case .nestingTooDeep = error.kind { return true }
        return false
    }

    @Test("100,000 linked models convert to records and back on a task's stack")
    func deepLinkedChainMaps() async throws {
        try await Task.detached {
            let deep = ChainNode.chain(100_000)
            defer { deep.dismantle() }
            let record = try deep.managedObject()
            defer { record.releaseGraph() }
            let copy = try ChainNode.modelInstance(managedObject: record)
            defer { copy.dismantle() }
            #expect(copy.length == 100_000)
            #expect(Self.identifiers(copy) == Array(0..<100_000))
        }.value
    }

    @Test("100,000 embedded models: a typed error, not a crash")
    func deepEmbeddedChainMaps() async throws {
        try await Task.detached {
            let deep = EmbeddedNode.chain(100_000)
            defer { deep.dismantle() }
            let store = try Store.inMemory(models: [EmbeddedNode.self])
            let error = #expect(throws: (any Error).self) { try store.write { try $0.add(deep) } }
            #expect(error.map(Self.isNestingTooDeep) == true, "\(String(describing: error))")
            #expect(try store.objects(EmbeddedNode.self).isEmpty)
        }.value
    }

    @Test("A 100,000-link chain is written whole and read back whole on a task, by every route")
    func deepChainInTheStore() async throws {
        try await Task.detached {
            try withTemporaryDirectory { directory in
                let path = directory + "/chain.store"
                var configuration = Store.Configuration()
                configuration.durability = .none
                let store = try Store(path: path, models: [ChainNode.self], configuration: configuration)
                let deep = ChainNode.chain(100_000)
                try store.write { try $0.add(deep) }
                deep.dismantle()
                try Self.readsWhole(store)
                try store.close()

                // Stored a node at a time, each linking by key to the one before, as a file
                // written elsewhere could hold it.
                try FileManager.default.removeItem(atPath: path)
                let linked = try Store(path: path, models: [ChainNode.self], configuration: configuration)
                try linked.write { transaction in
                    for identifier in (0..<100_000).reversed() {
                        let node = ChainNode()
                        node.identifier = identifier
                        if identifier < 99_999 {
                            let next = ChainNode()
                            next.identifier = identifier + 1
                            node.next = next
                        }
                        try transaction.add(node, linkedObjects: .referenceOnly)
                    }
                }
                try linked.close()
                let reopened = try Store(path: path, models: [ChainNode.self], configuration: configuration)
                try Self.readsWhole(reopened)
                try reopened.close()
            }
        }.value
    }

    /// The chain 0 → 1 → … → 99,999 reads whole by key, by subscript and in bulk.
    private static func readsWhole(_ store: Store) throws {
        let head = try #require(try store.object(ChainNode.self, primaryKey: 0))
        #expect(identifiers(head) == Array(0..<100_000))
        head.dismantle()
        let results = try store.objects(ChainNode.self)
        #expect(results.count == 100_000)
        let first = results[0]
        #expect(first.length == 100_000)
        first.dismantle()
        let tail = try results.object(at: 99_999)
        #expect(tail.identifier == 99_999 && tail.next == nil)
        let all = try results.all()
        #expect(all.count == 100_000 && all[0].length == 100_000)
        all[0].dismantle()
    }

    private static func identifiers(_ head: ChainNode) -> [Int] {
        var identifiers: [Int] = []
        var node: ChainNode? = head
        while let current = node {
            identifiers.append(current.identifier)
            node = current.next
        }
        return identifiers
    }
}
