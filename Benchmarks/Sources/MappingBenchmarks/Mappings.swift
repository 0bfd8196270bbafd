import Foundation
import MirrorStore

/// The four ways of converting a model to its stored form and back, compared side by side.
enum Implementation: String, CaseIterable {
    case handWritten = "hand-written"
    case mirrorStore = "MirrorStore"
    case naiveMirror = "naive Mirror"
    case codable = "Codable JSON"
}

/// One implementation's conversions for one model type. The benchmark loops are generic over this
/// protocol, so each one is specialised for its implementation: no closure call per object.
protocol Mapping {
    associatedtype Model
    associatedtype Stored
    var implementation: Implementation { get }
    func stored(from model: Model) throws -> Stored
    func model(from stored: Stored) throws -> Model
}

// MARK: (a) Hand-written translators

struct HandWrittenUserMapping: Mapping {
    var implementation: Implementation { .handWritten }
    func stored(from model: User) throws -> ManagedObject { try HandWritten.record(for: model) }
    func model(from stored: ManagedObject) throws -> User { try HandWritten.user(from: stored) }
}

struct HandWrittenOrderMapping: Mapping {
    var implementation: Implementation { .handWritten }
    func stored(from model: Order) throws -> ManagedObject { try HandWritten.record(for: model) }
    func model(from stored: ManagedObject) throws -> Order { try HandWritten.order(from: stored) }
}

// MARK: (b) MirrorStore

struct MirrorStoreMapping<Model: Persistable>: Mapping {
    var implementation: Implementation { .mirrorStore }
    func stored(from model: Model) throws -> ManagedObject { try model.managedObject() }
    func model(from stored: ManagedObject) throws -> Model { try Model.modelInstance(managedObject: stored) }
}

// MARK: (c) Naive per-instance Mirror walk

struct NaiveMirrorMapping<Model: NaiveAssignable>: Mapping {
    var implementation: Implementation { .naiveMirror }
    func stored(from model: Model) throws -> ManagedObject { try NaiveMirror.record(for: model) }
    func model(from stored: ManagedObject) throws -> Model { try NaiveMirror.model(Model.self, from: stored) }
}

// MARK: (d) Codable JSON

/// One encoder and one decoder reused for every object, with default options (dates as seconds
/// since the reference date): the cheapest way to use them.
struct CodableMapping<Model: Codable>: Mapping {
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    var implementation: Implementation { .codable }
    func stored(from model: Model) throws -> Data { try encoder.encode(model) }
    func model(from stored: Data) throws -> Model { try decoder.decode(Model.self, from: stored) }
}
