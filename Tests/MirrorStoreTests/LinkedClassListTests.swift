import Testing
@testable import MirrorStore

/// A class model that is `Hashable` by its name alone, so a set keeps one of two equal tags.
final class NamedTag: Persistable, Hashable {
    var name = ""
    init() {}

    static func == (lhs: NamedTag, rhs: NamedTag) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

final class TagBoard: Persistable {
    var tags: Set<NamedTag> = []
    var pinned: [NamedTag] = []
    init() {}
}

final class Kennel: Persistable {
    var bestDog: Dog?
    var animals: [Animal] = []
    init() {}
}

/// Lists of linked class models are made in place by a conversion without a generic parameter
/// (`ModelArrayCodec`); these cover what that path must keep from the generic one.
@Suite("Lists of linked class models")
struct LinkedClassListTests {
    /// Sets a value without the kind check `setValue(_:forProperty:)` makes, to build bad records.
    private static func set(_ record: ManagedObject, _ name: String, to value: RecordValue) throws {
        let index = try #require(record.objectSchema.index(ofProperty: name))
        record.values[index] = value
    }

    @Test("a set that drops an equal class model keeps it for the links that reach it again")
    func setDuplicatesStayAlive() throws {
        let first = NamedTag()
        first.name = "same"
        let second = NamedTag()
        second.name = "same"
        let board = TagBoard()
        board.tags = [first]
        board.pinned = [first, second]
        let record = try board.managedObject()
        defer { record.releaseGraph() }
        // The set's list holds both tags' records, so the set decodes two equal tags and keeps
        // one; the pinned list then reaches both records again.
        guard case .list(let pinned)? = record["pinned"] else {
            Issue.record("no pinned list in \(record)")
            return
        }
        try Self.set(record, "tags", to: .list(pinned))

        let copy = try TagBoard.modelInstance(managedObject: record)
        #expect(copy.tags.count == 1)
        #expect(copy.pinned.count == 2)
        #expect(copy.pinned.allSatisfy { $0.name == "same" })
        #expect(copy.pinned[0] !== copy.pinned[1], "two records stay two instances")
        #expect(copy.tags.contains { $0 === copy.pinned[0] || $0 === copy.pinned[1] })
    }

    @Test("an instance made as a subclass is reached again through a list of its superclass")
    func subclassInstanceInSuperclassList() throws {
        let dog = Dog()
        dog.name = "Rex"
        dog.breed = "collie"
        let kennel = Kennel()
        kennel.bestDog = dog
        // Encoding refuses a subclass instance in a superclass property; a record can hold one.
        let record = try kennel.managedObject()
        defer { record.releaseGraph() }
        guard case .object(let dogRecord)? = record["bestDog"] else {
            Issue.record("no dog in \(record)")
            return
        }
        try Self.set(record, "animals", to: .list([.object(dogRecord)]))

        let copy = try Kennel.modelInstance(managedObject: record)
        #expect(copy.bestDog?.breed == "collie")
        #expect(copy.animals.count == 1)
        #expect(copy.animals.first === copy.bestDog)
    }

    @Test("a list that fails part-way names the element and the field", arguments: [0, 1, 2])
    func failurePartWay(failingAt position: Int) throws {
        let root = Node()
        root.children = (0..<3).map { index in
            let child = Node()
            child.name = "child \(index)"
            return child
        }
        let record = try root.managedObject()
        defer { record.releaseGraph() }
        guard case .list(var children)? = record["children"], case .object(let failing) = children[position] else {
            Issue.record("no children in \(record)")
            return
        }
        // The instance is made before its field fails: the list must release it with the others.
        try Self.set(failing, "name", to: .int(7))
        #expect {
            try Node.modelInstance(managedObject: record)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.path == ["children", "[\(position)]", "name"] && error.modelType == "Node"
        }

        // A value that is not a record fails before any instance is made.
        children[position] = .string("not a node")
        try Self.set(record, "children", to: .list(children))
        #expect {
            try Node.modelInstance(managedObject: record)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.path == ["children", "[\(position)]"]
        }
    }

    @Test("a list element of another model type is refused")
    func wrongTypeInList() throws {
        let root = Node()
        root.children = [Node()]
        let record = try root.managedObject()
        defer { record.releaseGraph() }
        let stranger = try Publisher().managedObject()
        try Self.set(record, "children", to: .list([.object(stranger)]))
        #expect {
            try Node.modelInstance(managedObject: record)
        } throws: { error in
            guard let error = error as? MappingError, case .wrongRecordType(let expected, let found) = error.kind else { return false }
            return expected == "Node" && found == "Publisher" && error.path == ["children", "[0]"]
        }
    }
}
