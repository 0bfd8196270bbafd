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

/// Chains deeper than any thread's stack can follow end in a typed error, never a crash; chains
/// of ordinary depth convert and store. Run on tasks, whose threads have the smallest stacks.
@Suite("Deep chains")
struct DeepChainTests {
    static func isNestingTooDeep(_ error: any Error) -> Bool {
        if let error = error as? MappingError, case .nestingTooDeep = error.kind { return true }
        if let error = error as? StoreError, case .nestingTooDeep = error.kind { return true }
        return false
    }

    @Test("100,000 linked models: converting them is a typed error on a task's stack; 100 convert")
    func deepLinkedChainMaps() async throws {
        try await Task.detached {
            let deep = ChainNode.chain(100_000)
            defer { deep.dismantle() }
            let error = #expect(throws: MappingError.self) { try deep.managedObject() }
            #expect(error.map(Self.isNestingTooDeep) == true, "\(String(describing: error))")
            #expect(error?.description.contains("levels deep") == true)

            let shallow = ChainNode.chain(100)
            defer { shallow.dismantle() }
            let record = try shallow.managedObject()
            defer { record.releaseGraph() }
            let copy = try ChainNode.modelInstance(managedObject: record)
            defer { copy.dismantle() }
            #expect(copy.length == 100)
        }.value
    }

    @Test("100,000 embedded models: a typed error, not a crash")
    func deepEmbeddedChainMaps() async throws {
        try await Task.detached {
            let deep = EmbeddedNode.chain(100_000)
            defer { deep.dismantle() }
            let error = #expect(throws: MappingError.self) { try deep.managedObject() }
            #expect(error.map(Self.isNestingTooDeep) == true, "\(String(describing: error))")

            let store = try Store.inMemory(models: [EmbeddedNode.self])
            #expect(throws: MappingError.self) { try store.write { try $0.add(deep) } }
            #expect(try store.objects(EmbeddedNode.self).isEmpty)
        }.value
    }

    @Test("A store holding a 100,000-link chain: a typed error where a read must follow it all, never a crash")
    func deepChainInTheStore() async throws {
        try await Task.detached {
            try withTemporaryDirectory { directory in
                let path = directory + "/chain.store"
                var configuration = Store.Configuration()
                configuration.durability = .none
                let store = try Store(path: path, models: [ChainNode.self], configuration: configuration)

                // Saving the whole chain at once converts it at once: refused, nothing written.
                let deep = ChainNode.chain(100_000)
                defer { deep.dismantle() }
                let refused = #expect(throws: (any Error).self) { try store.write { try $0.add(deep) } }
                #expect(refused.map(Self.isNestingTooDeep) == true, "\(String(describing: refused))")
                #expect(try store.objects(ChainNode.self).isEmpty)

                // Stored a node at a time, each linking by key to the one before: as a file
                // written elsewhere could hold it.
                try store.write { transaction in
                    for identifier in 0..<100_000 {
                        let node = ChainNode()
                        node.identifier = identifier
                        if identifier > 0 {
                            let previous = ChainNode()
                            previous.identifier = identifier - 1
                            node.next = previous
                        }
                        try transaction.add(node, linkedObjects: .referenceOnly)
                    }
                }
                try store.close()

                let reopened = try Store(path: path, models: [ChainNode.self], configuration: configuration)
                // One object reached from the far end of the chain follows every link: refused.
                let unreadable = #expect(throws: (any Error).self) { _ = try reopened.object(ChainNode.self, primaryKey: 99_999) }
                #expect(unreadable.map(Self.isNestingTooDeep) == true, "\(String(describing: unreadable))")
                // Read in bulk, in key order, each node's link is already read when the node is:
                // making results, which reads every object once, succeeds.
                let results = try reopened.objects(ChainNode.self)
                #expect(results.count == 100_000)
                // A single read from the results follows the chain again: the throwing accessor
                // says why, and the subscript, which cannot throw, says so in readFailure.
                let single = #expect(throws: (any Error).self) { _ = try results.object(at: 99_999) }
                #expect(single.map(Self.isNestingTooDeep) == true)
                #expect(results.readFailure == nil)
                let placeholder = results[99_999]
                #expect(placeholder.identifier == 0 && placeholder.next == nil)
                #expect(results.readFailure.map(Self.isNestingTooDeep) == true)
                // The near end of the chain reads normally.
                let short = try #require(try reopened.object(ChainNode.self, primaryKey: 50))
                defer { short.dismantle() }
                #expect(short.length == 51)
                try reopened.close()
            }
        }.value
    }
}
