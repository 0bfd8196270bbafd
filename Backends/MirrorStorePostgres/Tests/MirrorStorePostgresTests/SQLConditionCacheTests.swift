import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import Testing

@Suite("SQL conditions by shape")
struct SQLConditionCacheTests {
    /// Random trees over `Sample`'s columns (seeded), each shape filled with several sets of
    /// constants, edge values included (NaN, `nil`, NUL, URLs that do not parse, ranges out of
    /// order, equal constants): the cache spells the same text, exactness and parameters as
    /// translating each tree, or throws the same error.
    @Test func cachedConditionsAreTheTranslationsOfEachTree() throws {
        let mapping = try DatabaseMapping(models: [Sample.self, Publisher.self])
        let table = try mapping.table(named: "Sample")
        let translator = SQLConditionTranslator(table: table, mapping: mapping)
        var generator = TreeGenerator(table: table, random: SeededRandom(seed: 3_032))
        var compared = 0
        for _ in 0..<600 {
            let shape = generator.condition(depth: 3)
            for _ in 0..<5 {
                let tree = generator.refill(shape)
                var parameters = SQLParameters()
                let expected = Result { try translator.condition(tree, &parameters) }
                let cached = Result { try mapping.conditions.condition(tree, translator: translator) }
                switch (expected, cached) {
                case (.success(let condition), .success(let (cachedCondition, cachedParameters))):
                    #expect(condition?.text == cachedCondition?.text, "\(tree)")
                    #expect(condition?.isExact == cachedCondition?.isExact, "\(tree)")
                    #expect(parameters.bound == cachedParameters.bound, "\(tree)")
                    #expect(parameters.count == cachedParameters.count, "\(tree)")
                case (.failure(let error), .failure(let cachedError)):
                    #expect("\(error)" == "\(cachedError)", "\(tree)")
                default:
                    Issue.record("one route threw and the other did not: \(tree)")
                }
                compared += 1
            }
        }
        #expect(compared == 3_000)
        // Shapes were kept, so later trees of them were answered from the cache.
        #expect(mapping.conditions.shapeCount > 100)
    }

    /// A mapping made again (a store opened again, or after a migration) keeps no shape of
    /// another.
    @Test func eachMappingHasItsOwnShapes() throws {
        let first = try DatabaseMapping(models: [Sample.self])
        let table = try first.table(named: "Sample")
        _ = try first.conditions.condition(.equal(.property(["int64"]), .constant(.int(3))), translator: SQLConditionTranslator(table: table, mapping: first))
        #expect(first.conditions.shapeCount == 1)
        let second = try DatabaseMapping(models: [Sample.self])
        #expect(second.conditions.shapeCount == 0)
    }
}

/// Random query trees over a table's columns, and the same trees with other constants.
private struct TreeGenerator {
    let table: TableMapping
    var random: SeededRandom

    private mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

    /// A condition: comparisons, tests of text and arrays, and `&&`, `||`, `!` of them.
    mutating func condition(depth: Int) -> QueryExpression {
        if depth > 0, random.chance(40) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .and(condition(depth: depth - 1), condition(depth: depth - 1))
            case 1: return .or(condition(depth: depth - 1), condition(depth: depth - 1))
            default: return .not(condition(depth: depth - 1))
            }
        }
        let column = pick(table.columns)
        let path: QueryExpression = random.chance(5) ? .property(["publisher", "name"]) : .property([column.property])
        let value = constant(for: column)
        switch Int.random(in: 0..<13, using: &random) {
        case 0: return random.chance(50) ? .equal(path, value) : .equal(value, path)
        case 1: return .notEqual(path, value)
        case 2:
            let op = pick([QueryComparisonOperator.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual])
            return random.chance(50) ? .compare(path, op, value) : .compare(value, op, path)
        case 3: return .inRange(path, lower: value, upper: constant(for: column), isClosed: random.chance(50))
        case 4: return .startsWith(path, .constant(text()))
        case 5: return .containsText(path, .constant(text()))
        case 6: return .contains(path, value)
        case 7: return .isEmpty(path)
        case 8: return path
        case 9: return .constant(.bool(random.chance(50)))
        case 10: return .equal(.count(path), .constant(.int(Int64.random(in: 0...2, using: &random))))
        case 11: return .compare(.nilCoalesce(path, value), .greaterThan, constant(for: column))
        default: return random.chance(50) ? .other : .equal(path, .constant(.null))
        }
    }

    /// `shape` with each constant replaced by another of its kind (sometimes of another kind
    /// within the same trait, which the cache must tell apart by itself).
    mutating func refill(_ shape: QueryExpression) -> QueryExpression {
        switch shape {
        case .constant(let value): return .constant(another(like: value))
        case .property, .other: return shape
        case .equal(let a, let b): return .equal(refill(a), refill(b))
        case .notEqual(let a, let b): return .notEqual(refill(a), refill(b))
        case .compare(let a, let op, let b): return .compare(refill(a), op, refill(b))
        case .and(let a, let b): return .and(refill(a), refill(b))
        case .or(let a, let b): return .or(refill(a), refill(b))
        case .not(let a): return .not(refill(a))
        case .nilCoalesce(let a, let b): return .nilCoalesce(refill(a), refill(b))
        case .startsWith(let a, let b): return .startsWith(refill(a), refill(b))
        case .containsText(let a, let b): return .containsText(refill(a), refill(b))
        case .contains(let a, let b): return .contains(refill(a), refill(b))
        case .count(let a): return .count(refill(a))
        case .isEmpty(let a): return .isEmpty(refill(a))
        case .inRange(let value, let lower, let upper, let isClosed):
            return .inRange(refill(value), lower: refill(lower), upper: refill(upper), isClosed: isClosed)
        }
    }

    /// A constant of the column's kind mostly, of another kind sometimes.
    private mutating func constant(for column: ColumnMapping) -> QueryExpression {
        var type: ScalarType?
        switch column.storage {
        case .scalar(let scalar), .array(let scalar): type = scalar
        case .link(_, let key): type = key
        default: type = nil
        }
        if random.chance(15) { type = pick([.boolean, .bigint, .unsigned, .real, .double, .text, .bytea, .date, .uuid, .decimal, .url]) }
        if random.chance(8) { return .constant(.null) }
        return .constant(value(of: type ?? .bigint))
    }

    private mutating func value(of type: ScalarType) -> QueryConstant {
        switch type {
        case .boolean: .bool(random.chance(50))
        case .bigint: .int(pick([0, 1, -1, 7, Int64.max, Int64.min]))
        case .unsigned: .uint(pick([0, 1, 7, UInt64.max]))
        case .real: .float(pick([0, 1.5, -2, .nan, .infinity]))
        case .double: .double(pick([0, 1.5, -2, .nan, -.infinity]))
        case .text: text()
        case .bytea: .data(Data(pick([[], [0], [1, 2, 3]])))
        case .date: .date(Date(timeIntervalSinceReferenceDate: pick([0, 1.5, -86_400, .nan])))
        case .uuid: .uuid(pick([UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), UUID(uuid: (9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]))
        case .decimal: .decimal(pick([Decimal(0), Decimal(string: "1.25") ?? 1, Decimal.nan, Decimal(-7)]))
        case .url: .url(pick(["https://example.com/a", "file:///tmp/x", "http://[", ""]))
        }
    }

    private mutating func text() -> QueryConstant {
        .string(pick(["", "a", "Hulk", "é", "e\u{301}", "x\u{0}y", "日本"]))
    }

    private mutating func another(like constant: QueryConstant) -> QueryConstant {
        switch constant {
        case .null: .null
        case .bool: value(of: .boolean)
        case .int: value(of: .bigint)
        case .uint: value(of: .unsigned)
        case .float: value(of: .real)
        case .double: value(of: .double)
        case .string: text()
        case .data: value(of: .bytea)
        case .date: value(of: .date)
        case .uuid: value(of: .uuid)
        case .decimal: value(of: .decimal)
        case .url: value(of: .url)
        }
    }
}
