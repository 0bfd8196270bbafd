import Dispatch
import Foundation
import Testing
@_spi(Reflection) import Swift
@testable import MirrorStore
import MirrorStoreEngine

/// Used by no other test, so the concurrent test below really is its first use.
private final class FirstUseModel: Persistable {
    var identifier = 0
    var children: [FirstUseChild] = []
    var parent: FirstUseModel?
    init() {}
}

private struct FirstUseChild: Persistable {
    var label = ""
    init() {}
}

private struct ProbeStruct {
    var value = 0
}

private final class ProbeClass {
    var value = 0
}

@Suite("Plan cache and field layout")
struct PlanCacheTests {
    @Test("first use from many threads at once builds one plan per type")
    func concurrentFirstUse() throws {
        let schemas = Lock<Set<ObjectIdentifier>>([])
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 32) { index in
            do {
                let model = FirstUseModel()
                model.identifier = index
                var child = FirstUseChild()
                child.label = "\(index)"
                model.children = [child]
                let record = try model.managedObject()
                let copy = try FirstUseModel.modelInstance(managedObject: record)
                guard copy.identifier == index, copy.children.first?.label == "\(index)" else {
                    failures.withLock { $0.append("thread \(index) read back wrong values") }
                    return
                }
                schemas.withLock { _ = $0.insert(ObjectIdentifier(record.objectSchema)) }
            } catch {
                failures.withLock { $0.append("thread \(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(schemas.withLock { $0.count } == 1, "every thread sees the one published plan")
    }

    @Test("the class option bit matches the runtime's _EachFieldOptions.classType")
    func classTypeOption() {
        #expect(_forEachField(of: ProbeClass.self, options: FieldLayout.classTypeOption) { _, _, _, _ in true })
        #expect(!_forEachField(of: ProbeClass.self, options: []) { _, _, _, _ in true })
        #expect(!_forEachField(of: ProbeStruct.self, options: FieldLayout.classTypeOption) { _, _, _, _ in true })
    }

    @Test("stored fields report let, weak and inherited properties")
    func storedFields() throws {
        let fields = try #require(FieldLayout.storedFields(of: Puppy.self))
        #expect(fields.map(\.name) == ["name", "legs", "breed", "goodBoy", "ageInWeeks"])
        #expect(Set(fields.map(\.offset)).count == fields.count)
        #expect(FieldLayout.storedFields(of: Power.self) == nil)
        #expect(FieldLayout.metadataKind(of: Int.self) == .struct)
        #expect(FieldLayout.metadataKind(of: Node.self) == .class)
        #expect(FieldLayout.metadataKind(of: Power.self) == .enum)
    }
}
