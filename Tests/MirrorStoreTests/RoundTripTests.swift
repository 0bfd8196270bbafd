import Foundation
import Testing
@testable import MirrorStore
import MirrorStoreEngine

@Suite("Round trips")
struct RoundTripTests {
    private static func roundTrip<Model: Persistable>(_ model: Model) throws -> Model {
        let record = try model.managedObject()
        defer { record.releaseGraph() }
        return try Model.modelInstance(managedObject: record)
    }

    @Test("default values of every supported type")
    func defaults() throws {
        let model = AllTypes()
        #expect(try Self.roundTrip(model) == model)
    }

    @Test("non-empty values of every supported type")
    func filled() throws {
        var model = AllTypes()
        model.bool = true
        model.int = .min
        model.int8 = .max
        model.int16 = -300
        model.int32 = .min
        model.int64 = .max
        model.uint = .max
        model.uint8 = 200
        model.uint16 = .max
        model.uint32 = 70_000
        model.uint64 = .max
        model.float = -.infinity
        model.double = .greatestFiniteMagnitude
        model.string = "Grüße, 世界 👋"
        model.data = Data([0, 1, 2, 255])
        model.date = Date(timeIntervalSince1970: 1_700_000_000.25)
        model.uuid = UUID()
        model.decimal = Decimal(string: "12345678901234567890.123456789") ?? 0
        model.url = URL(string: "https://example.com/path?q=1#frag") ?? model.url
        model.suit = .diamonds
        model.level = .high
        model.ratio = .whole
        model.optionalBool = false
        model.optionalInt = 0
        model.optionalInt8 = -128
        model.optionalUInt64 = 42
        model.optionalFloat = 1.5
        model.optionalDouble = -0.0
        model.optionalString = ""
        model.optionalData = Data()
        model.optionalDate = Date(timeIntervalSinceReferenceDate: -1)
        model.optionalUUID = UUID()
        model.optionalDecimal = Decimal(-7)
        model.optionalURL = URL(fileURLWithPath: "/tmp/x y")
        model.optionalSuit = .spades
        model.ints = [1, -2, 3]
        model.strings = ["a", "b", ""]
        model.doubles = ["pi": 3.14, "e": 2.71]
        model.optionalStrings = ["x"]
        model.optionalElements = [1, nil, 3]
        model.nestedLists = [[], ["a"], ["b", "c"]]
        model.listsByKey = ["empty": [], "one": [1]]
        model.suits = [.clubs, .clubs]
        model.levels = [.low, .high]
        model.optionalSet = [UUID()]
        #expect(try Self.roundTrip(model) == model)
    }

    @Test("empty but present containers stay distinct from nil")
    func emptyOptionalContainers() throws {
        var model = AllTypes()
        model.optionalStrings = []
        model.optionalSet = []
        let copy = try Self.roundTrip(model)
        #expect(copy.optionalStrings == [])
        #expect(copy.optionalSet == [])
    }

    @Test("record values and the schema reflect the model")
    func recordShape() throws {
        let hero = Hero.ironMan()
        let record = try hero.managedObject()
        #expect(record["realName"] == "Tony Stark")
        #expect(record["identifier"] == 1455)
        #expect(record["power"] == "money")
        #expect(record["tags"] == ["avenger", "genius"])
        #expect(record["cache"] == nil, "ignored properties are not stored")
        #expect(record["displayName"] == nil, "lazy properties are not stored")
        guard case .object(let publisher)? = record["publisher"] else {
            Issue.record("publisher is not a linked record: \(String(describing: record["publisher"]))")
            return
        }
        #expect(publisher["name"] == "Marvel")

        let schema = try Hero.objectSchema()
        #expect(schema.typeName == "Hero")
        #expect(schema.primaryKey == "identifier")
        #expect(schema.indexedProperties == ["name"])
        #expect(schema.ignoredProperties == ["cache"])
        #expect(schema.properties.map(\.name) == ["identifier", "name", "realName", "power", "publisher", "tags", "aliases"])
        #expect(schema.property(named: "publisher")?.kind == .optional(.object(typeName: "Publisher")))
        #expect(schema.property(named: "aliases")?.kind == .set(.string))
        #expect(record.objectSchema === schema, "records share their type's cached schema")
    }

    @Test("ignored properties come back with their init() value")
    func ignoredProperties() throws {
        let copy = try Self.roundTrip(Hero.ironMan())
        #expect(copy.cache == [:])
        #expect(copy.name == "Iron Man")
        #expect(copy.publisher?.name == "Marvel")
        #expect(copy.aliases == ["Shellhead"])
        #expect(copy.displayName == "Iron Man (Tony Stark)")
    }

    @Test("three levels of nesting through links, lists, sets and dictionaries")
    func threeLevels() throws {
        let employee = Employee()
        employee.identifier = 7
        employee.name = "Ada"
        let company = Company()
        company.name = "Analytical Engines"
        company.headquarters.street = "1 Main St"
        company.headquarters.zip = 10115
        company.branches = [Address(), { var a = Address(); a.street = "Dock"; return a }()]
        employee.employer = company
        let previous = Company()
        previous.name = "Difference Ltd"
        employee.previousEmployers = [previous, company]
        var home = Address()
        home.street = "Home"
        employee.homes = [home, Address()]
        employee.contacts = ["office": company.headquarters]

        let copy = try Self.roundTrip(employee)
        #expect(copy.identifier == 7)
        #expect(copy.employer?.headquarters == company.headquarters)
        #expect(copy.employer?.branches == company.branches)
        #expect(copy.previousEmployers.map(\.name) == ["Difference Ltd", "Analytical Engines"])
        #expect(copy.employer === copy.previousEmployers[1], "a class reached twice comes back once")
        #expect(copy.homes == employee.homes)
        #expect(copy.contacts == employee.contacts)
    }

    @Test("cycles come back with the same shape")
    func cycles() throws {
        let first = Node()
        first.name = "first"
        let second = Node()
        second.name = "second"
        first.next = second
        second.next = first
        first.children = [first, second]
        second.byName = ["me": second, "other": first]

        let record = try first.managedObject()
        guard case .object(let secondRecord)? = record["next"], case .object(let back)? = secondRecord["next"] else {
            Issue.record("links missing from \(record)")
            return
        }
        #expect(back === record, "a cycle in the model is a cycle in the records")

        let copy = try Node.modelInstance(managedObject: record)
        #expect(copy.name == "first")
        #expect(copy.next?.name == "second")
        #expect(copy.next?.next === copy)
        #expect(copy.children.count == 2)
        #expect(copy.children[0] === copy)
        #expect(copy.children[1] === copy.next)
        #expect(copy.next?.byName["me"] === copy.next)
        #expect(copy.next?.byName["other"] === copy)
        // Break the cycles so the test does not leak.
        record.releaseGraph()
        for node in [first, second, copy, copy.next].compactMap({ $0 }) {
            node.next = nil
            node.children = []
            node.byName = [:]
        }
    }

    @Test("shared references stay shared, distinct equal objects stay distinct")
    func sharing() throws {
        let shared = Node()
        shared.name = "shared"
        let twin = Node()
        twin.name = "shared"
        let root = Node()
        root.children = [shared, shared, twin]
        let copy = try Self.roundTrip(root)
        #expect(copy.children[0] === copy.children[1])
        #expect(copy.children[0] !== copy.children[2])
        #expect(copy.children[2].name == "shared")
    }

    @Test("a chain of 500 linked models converts both ways")
    func longChain() throws {
        // Conversion recurses once per link (docs/ARCHITECTURE.md). Sanitizer builds take many
        // times the stack per level, so the chain runs on a thread with a known stack rather than
        // on whichever worker the test runner picks.
        let count = try onThread(stackSize: 64 << 20) {
            let head = Node()
            var tail = head
            for index in 1..<500 {
                let node = Node()
                node.name = "\(index)"
                tail.next = node
                tail = node
            }
            var copy: Node? = try Self.roundTrip(head)
            var count = 0
            while let node = copy {
                count += 1
                copy = node.next
            }
            return count
        }
        #expect(count == 500)
    }

    private func onThread<Result: Sendable>(stackSize: Int, _ body: @escaping @Sendable () throws -> Result) throws -> Result {
        let outcome = Lock<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Swift.Result { try body() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return try outcome.withLock { $0 }.map { try $0.get() } ?? { throw CancellationError() }()
    }

    @Test("inherited stored properties are mapped, superclass first")
    func inheritance() throws {
        let puppy = Puppy()
        puppy.name = "Rex"
        puppy.legs = 3
        puppy.breed = "Collie"
        puppy.goodBoy = false
        puppy.ageInWeeks = 12
        let record = try puppy.managedObject()
        #expect(record.objectSchema.typeName == "Puppy")
        #expect(record.objectSchema.properties.map(\.name) == ["name", "legs", "breed", "goodBoy", "ageInWeeks"])
        let copy = try Puppy.modelInstance(managedObject: record)
        #expect(copy.name == "Rex")
        #expect(copy.legs == 3)
        #expect(copy.breed == "Collie")
        #expect(copy.goodBoy == false)
        #expect(copy.ageInWeeks == 12)

        let animal: Animal = puppy
        #expect(try animal.managedObject().objectSchema.typeName == "Puppy", "the dynamic type decides the record")
    }

    @Test("NSObject subclasses are models like any class")
    func nsObjectSubclass() throws {
        let legacy = LegacyRecord()
        legacy.title = "Old"
        legacy.count = 3
        legacy.tags = ["a"]
        let record = try legacy.managedObject()
        #expect(record.objectSchema.properties.map(\.name) == ["title", "count", "tags"])
        let copy = try LegacyRecord.modelInstance(managedObject: record)
        #expect(copy.title == "Old")
        #expect(copy.count == 3)
        #expect(copy.tags == ["a"])
    }

    @Test("List bridges to arrays and sets")
    func listBridging() throws {
        var list: List<Int> = [3, 1, 2]
        list.append(3)
        list.sort()
        #expect(Array(list) == [1, 2, 3, 3])
        #expect(list.array == [1, 2, 3, 3])
        #expect(list.set == [1, 2, 3])
        #expect(Set(list) == [1, 2, 3])
        #expect(List(Set([5])) == [5])
        list.replaceSubrange(0..<2, with: [9])
        #expect(list == [9, 3, 3])
        list.removeAll()
        #expect(list.isEmpty)
        #expect(Set([List([1]), List([1]), List([2])]).count == 2)
    }
}
