import Foundation
import MirrorStoreEngine

/// Conditions decided on one type's encoded records, without building models: each record is
/// projected to the properties the conditions read, and links are read from the same snapshot
/// (as pending writes, if any, have left it), each once.
struct RecordConditions {
    private let schema: ObjectSchema
    /// Each condition, with the variable that stands for the record in it.
    private let conditions: [(QueryNode, PredicateExpressions.VariableID)]
    private let projection: RecordProjection
    private let evaluator: ConditionEvaluator

    init(
        schema: ObjectSchema, conditions: [(QueryNode, PredicateExpressions.VariableID)],
        snapshot: EngineSnapshot, schemas: any SchemaSource, pending: PendingWrites? = nil
    ) {
        self.schema = schema
        self.conditions = conditions
        let properties = conditions.reduce(into: Set<String>()) { $0.formUnion($1.0.properties(readFrom: $1.1)) }
        projection = RecordProjection(schema: schema, properties: properties, schemas: schemas)
        let linked = LinkedRecords(snapshot: snapshot, schemas: schemas, pending: pending)
        evaluator = ConditionEvaluator(resolve: linked.record(type:key:))
    }

    /// The record stored as `bytes`, projected for the conditions.
    ///
    /// - Throws: ``StoreError`` naming the record when it does not decode.
    func record(_ bytes: [UInt8], key: StorageKey) throws -> QueryValue {
        .embedded(schema, try values(bytes, key: key))
    }

    /// The values of the record stored as `bytes`, in schema order, those the conditions read
    /// projected.
    ///
    /// - Throws: ``StoreError`` naming the record when it does not decode.
    func values(_ bytes: [UInt8], key: StorageKey) throws -> [QueryValue] {
        do {
            return try projection.values(of: bytes)
        } catch {
            throw StoreError(error, typeName: schema.typeName, key: PrimaryKey.text(key, of: schema))
        }
    }

    /// Whether condition `index` holds for `record`, stored under `key`, or `nil` when only a
    /// model could say.
    ///
    /// - Throws: ``QueryError`` naming the record where the condition computes something Swift's
    ///   arithmetic traps on.
    func isTrue(_ index: Int, for record: QueryValue, key: StorageKey) throws -> Bool? {
        guard case .bool(let truth)? = try value(index, for: record, key: key) else { return nil }
        return truth
    }

    /// What node `index` computes for `record`, stored under `key` (a truth, or what a property
    /// path reads), or `nil` when only a model could say (for a path: a link on the way is `nil`
    /// or dangling).
    ///
    /// - Throws: ``QueryError`` naming the record where the node computes something Swift's
    ///   arithmetic traps on.
    func value(_ index: Int, for record: QueryValue, key: StorageKey) throws -> QueryValue? {
        let (node, root) = conditions[index]
        var bindings: ConditionEvaluator.Bindings = [(root, record)]
        do {
            return try evaluator.evaluate(node, bindings: &bindings)
        } catch let trap as ArithmeticTrap {
            throw QueryError(trap, typeName: schema.typeName, key: PrimaryKey.text(key, of: schema))
        }
    }
}
