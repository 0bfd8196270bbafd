import Foundation
import Testing
@testable import MirrorStore

private struct WithLock: Persistable {
    var name = ""
    var lock = NSLock()
    init() {}
}

private struct WithLockDeepInside: Persistable {
    var locks: [String: [NSLock]] = [:]
    init() {}
}

private enum Payment: Equatable {
    case cash
    case card(number: String)
}

private struct WithAssociatedValues: Persistable {
    var payment = Payment.cash
    init() {}
}

private struct WithAssociatedValuesInside: Persistable {
    var payments: [Payment] = []
    init() {}
}

private final class WithLet: Persistable {
    var name = ""
    let identifier = 42
    init() {}
}

private struct WithIgnoredLet: Persistable {
    var name = ""
    let identifier = 42
    init() {}
    static var ignoredProperties: [String] { ["identifier"] }
}

private final class WithWeak: Persistable {
    var name = ""
    weak var parent: WithWeak?
    init() {}
}

private final class WithUnownedIgnored: Persistable {
    var name = ""
    unowned var owner: WithUnownedIgnored?
    init() {}
    static var ignoredProperties: [String] { ["owner"] }
}

private struct DoubleOptional: Persistable {
    var value: Int?? = nil
    init() {}
}

private struct IntKeyedDictionary: Persistable {
    var byNumber: [Int: String] = [:]
    init() {}
}

private struct NestedUnsupported: Persistable {
    var inner = WithLock()
    init() {}
}

private struct BadIgnored: Persistable {
    var name = ""
    init() {}
    static var ignoredProperties: [String] { ["nmae"] }
}

private struct BadPrimaryKey: Persistable {
    var name = ""
    init() {}
    static var primaryKey: String? { "id" }
}

private struct DoublePrimaryKey: Persistable {
    var score = 0.0
    init() {}
    static var primaryKey: String? { "score" }
}

private struct BadIndex: Persistable {
    var name = ""
    init() {}
    static var indexedProperties: [String] { ["title"] }
}

private enum NotAModel: Persistable {
    case only
    init() { self = .only }
}

@Suite("Mapping errors")
struct MappingErrorTests {
    private func mappingError(_ body: () throws -> Void) -> MappingError? {
        do {
            try body()
            return nil
        } catch let error as MappingError {
            return error
        } catch {
            Issue.record("expected a MappingError, got \(error)")
            return nil
        }
    }

    @Test("unsupported property type")
    func unsupportedType() {
        let error = mappingError { _ = try WithLock().managedObject() }
        #expect(error?.description == "WithLock.lock has type NSLock, which MirrorStore cannot store; use a supported type or list the property in ignoredProperties.")
        #expect(error?.propertyPath == "WithLock.lock")
    }

    @Test("an enum with associated values is refused, saying so")
    func enumWithAssociatedValues() {
        let error = mappingError { _ = try WithAssociatedValues().managedObject() }
        #expect(error?.kind == .unsupportedEnum(declared: "Payment", enumType: "Payment"))
        #expect(error?.description == "WithAssociatedValues.payment has type Payment, an enum with associated values or without a raw value, which MirrorStore cannot store; give it a String or integer raw type and no associated values, or list the property in ignoredProperties.")
        let inside = mappingError { _ = try WithAssociatedValuesInside.objectSchema() }
        #expect(inside?.description == "WithAssociatedValuesInside.payments has type Array<Payment>, whose Payment is an enum with associated values or without a raw value, which MirrorStore cannot store; give it a String or integer raw type and no associated values, or list the property in ignoredProperties.")
    }

    @Test("unsupported type inside containers names the whole declared type")
    func unsupportedInsideContainers() {
        let error = mappingError { _ = try WithLockDeepInside.objectSchema() }
        #expect(error?.description == "WithLockDeepInside.locks has type Dictionary<String, Array<NSLock>>, which MirrorStore cannot store; use a supported type or list the property in ignoredProperties.")
    }

    @Test("unsupported type in a nested model reports the full path")
    func unsupportedNested() {
        let error = mappingError { _ = try NestedUnsupported().managedObject() }
        #expect(error?.description == "NestedUnsupported.inner.lock has type NSLock, which MirrorStore cannot store; use a supported type or list the property in ignoredProperties.")
    }

    @Test("nested optionals and non-String dictionary keys are unsupported")
    func unsupportedShapes() {
        #expect(mappingError { _ = try DoubleOptional.objectSchema() }?.description
            == "DoubleOptional.value has type Optional<Optional<Int>>, which MirrorStore cannot store; use a supported type or list the property in ignoredProperties.")
        #expect(mappingError { _ = try IntKeyedDictionary.objectSchema() }?.description
            == "IntKeyedDictionary.byNumber has type Dictionary<Int, String>, which MirrorStore cannot store; use a supported type or list the property in ignoredProperties.")
    }

    @Test("the record lacks a property")
    func missingProperty() throws {
        let record = try Hero.ironMan().managedObject().removing("realName")
        let error = mappingError { _ = try Hero.modelInstance(managedObject: record) }
        #expect(error?.description == "Hero.realName is missing from the record.")
        #expect(error?.kind == .missingProperty)
    }

    @Test("type mismatch at the top level and in a nested record")
    func typeMismatch() throws {
        let record = try Hero.ironMan().managedObject()
        let flat = try record.replacing("name", kind: .int, with: .int(5))
        #expect(mappingError { _ = try Hero.modelInstance(managedObject: flat) }?.description
            == "Hero.name expects String, but the record holds int(5).")

        guard case .object(let publisher)? = record["publisher"] else {
            Issue.record("no publisher record")
            return
        }
        let badPublisher = try publisher.replacing("name", kind: .int, with: .int(5))
        let nested = try record.replacing("publisher", kind: .optional(.object(typeName: "Publisher")), with: .object(badPublisher))
        let error = mappingError { _ = try Hero.modelInstance(managedObject: nested) }
        #expect(error?.description == "Hero.publisher.name expects String, but the record holds int(5).")
        #expect(error?.path == ["publisher", "name"])
    }

    @Test("type mismatch inside a list names the element")
    func listElementMismatch() throws {
        let record = try Hero.ironMan().managedObject()
        let bad = try record.replacing("tags", kind: .list(.optional(.string)), with: ["ok", nil])
        #expect(mappingError { _ = try Hero.modelInstance(managedObject: bad) }?.description
            == "Hero.tags[1] expects String, but the record holds null.")
    }

    @Test("a wrong element in an array or a set of single values names the element")
    func singleValueContainerElementMismatch() throws {
        let record = try AllTypes().managedObject()
        let badArray = try record.replacing("ints", kind: .list(.optional(.int)), with: .list([.int(1), .int(2), .null]))
        #expect(mappingError { _ = try AllTypes.modelInstance(managedObject: badArray) }?.description
            == "AllTypes.ints[2] expects Int, but the record holds null.")
        let badSet = try record.replacing("strings", kind: .set(.int), with: .list([.int(5)]))
        #expect(mappingError { _ = try AllTypes.modelInstance(managedObject: badSet) }?.description
            == "AllTypes.strings[0] expects String, but the record holds int(5).")
        let notAList = try record.replacing("strings", kind: .string, with: .string("a"))
        #expect(mappingError { _ = try AllTypes.modelInstance(managedObject: notAList) }?.description
            == "AllTypes.strings expects Set<String>, but the record holds string(\"a\").")
    }

    @Test("a wrong value inside one model of a list of models names the element and the property")
    func modelListElementMismatch() throws {
        let company = Company()
        company.branches = [Address(), Address(), Address()]
        let record = try company.managedObject()
        guard case .list(let branches)? = record["branches"], case .object(let third) = branches[2] else {
            Issue.record("no branch records")
            return
        }
        var changed = branches
        changed[2] = .object(try third.replacing("street", kind: .int, with: .int(9)))
        let bad = try record.replacing("branches", kind: .list(.object(typeName: "Address")), with: .list(changed))
        let error = mappingError { _ = try Company.modelInstance(managedObject: bad) }
        #expect(error?.description == "Company.branches[2].street expects String, but the record holds int(9).")
        let notAModel = try record.replacing("branches", kind: .list(.int), with: .list([.int(4)]))
        #expect(mappingError { _ = try Company.modelInstance(managedObject: notAModel) }?.path == ["branches", "[0]"])
    }

    @Test("an integer that does not fit its property")
    func integerOverflow() throws {
        let record = try AllTypes().managedObject().replacing("int8", kind: .int, with: .int(300))
        #expect(mappingError { _ = try AllTypes.modelInstance(managedObject: record) }?.description
            == "AllTypes.int8 expects Int8, but the record holds int(300).")
    }

    @Test("a value that does not fit, in a record with the model's own schema (the flat path)")
    func mismatchOnTheFlatPath() throws {
        let record = try Counter().managedObject()
        // The record keeps the plan's own schema object, so the flat path reads it.
        record.values[1] = .string("many")
        #expect(mappingError { _ = try Counter.modelInstance(managedObject: record) }?.description
            == "Counter.count expects Int, but the record holds string(\"many\").")
        record.values[1] = .int(7)
        #expect(try Counter.modelInstance(managedObject: record).count == 7)
        record.values[0] = .uint(300)
        #expect(mappingError { _ = try Counter.modelInstance(managedObject: record) }?.description
            == "Counter.slot expects UInt8, but the record holds uint(300).")
    }

    @Test("nil for a non-optional property")
    func unexpectedNil() throws {
        let record = try Hero.ironMan().managedObject().replacing("realName", kind: .optional(.string), with: .null)
        #expect(mappingError { _ = try Hero.modelInstance(managedObject: record) }?.description
            == "Hero.realName expects String, but the record holds null.")
    }

    @Test("an enum raw value with no case")
    func unknownEnumCase() throws {
        let record = try Hero.ironMan().managedObject().replacing("power", kind: .string, with: "laser")
        #expect(mappingError { _ = try Hero.modelInstance(managedObject: record) }?.description
            == "Hero.power expects a Power, but no case has the raw value \"laser\".")
        let level = try AllTypes().managedObject().replacing("level", kind: .int, with: 4)
        #expect(mappingError { _ = try AllTypes.modelInstance(managedObject: level) }?.description
            == "AllTypes.level expects a Level, but no case has the raw value 4.")
    }

    @Test("a class's let property is refused, unless ignored")
    func immutableProperty() throws {
        #expect(mappingError { _ = try WithLet().managedObject() }?.description
            == "WithLet.identifier is a 'let' constant of a class, which reflection cannot write into an instance safely; declare it 'var', list it in ignoredProperties, or make the model a struct.")
        var model = WithIgnoredLet()
        model.name = "kept"
        let copy = try WithIgnoredLet.modelInstance(managedObject: model.managedObject())
        #expect(copy.name == "kept")
        #expect(copy.identifier == 42)
    }

    @Test("weak and unowned references are refused, unless ignored")
    func nonStrongReference() throws {
        #expect(mappingError { _ = try WithWeak().managedObject() }?.description
            == "WithWeak.parent is a weak or unowned reference, which MirrorStore does not store; list it in ignoredProperties.")
        #expect(try WithUnownedIgnored.objectSchema().properties.map(\.name) == ["name"])
    }

    @Test("a subclass instance in a property declared as its superclass")
    func subclassInstance() {
        let zoo = Zoo()
        zoo.star = Dog()
        #expect(mappingError { _ = try zoo.managedObject() }?.description
            == "Zoo.star is declared as Animal but holds a Dog; MirrorStore stores a property's declared class only.")
    }

    @Test("a record of another type")
    func wrongRecordType() throws {
        let record = try Publisher().managedObject()
        #expect(mappingError { _ = try Hero.modelInstance(managedObject: record) }?.description
            == "Hero expects a record of Hero, but the record describes Publisher.")
    }

    @Test("model declarations that name no stored property")
    func unknownNames() {
        #expect(mappingError { _ = try BadIgnored.objectSchema() }?.description
            == "BadIgnored.nmae is named in ignoredProperties, but BadIgnored has no stored property by that name.")
        #expect(mappingError { _ = try BadPrimaryKey.objectSchema() }?.description
            == "BadPrimaryKey.id is named in primaryKey, but BadPrimaryKey has no stored property by that name.")
        #expect(mappingError { _ = try BadIndex.objectSchema() }?.description
            == "BadIndex.title is named in indexedProperties, but BadIndex has no stored property by that name.")
        #expect(mappingError { _ = try DoublePrimaryKey.objectSchema() }?.description
            == "DoublePrimaryKey.score is the primary key, but its type Double cannot be one; use an integer, String or UUID.")
    }

    @Test("a type without stored-property metadata")
    func unsupportedModel() {
        #expect(mappingError { _ = try NotAModel.only.managedObject() }?.description
            == "NotAModel cannot be mapped: only structs and classes can be models.")
    }

    @Test("checked record writes")
    func checkedWrites() throws {
        let record = try Hero.ironMan().managedObject()
        #expect(mappingError { try record.setValue(42, forProperty: "realName") }?.description
            == "Hero.realName expects String, but the record holds int(42).")
        #expect(mappingError { try record.setValue(nil, forProperty: "realName") }?.description
            == "Hero.realName expects String, but the record holds null.")
        #expect(mappingError { try record.setValue("x", forProperty: "nope") }?.description
            == "Hero.nope is missing from the record.")
        #expect(mappingError { try record.setValue("x", forPropertyAt: 99) }?.description
            == "Hero[99] is missing from the record.")
        #expect(mappingError { _ = try record.value(forProperty: "name", as: Int.self) }?.description
            == "Hero.name expects Int, but the record holds string(\"Iron Man\").")
        try record.setValue("Tony", forProperty: "realName")
        #expect(try record.value(forProperty: "realName", as: String.self) == "Tony")
        #expect(try record.value(forProperty: "identifier", as: Int?.self) == 1455)
    }
}
