import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Conditions written as text, as `mirrorstore dump --where` takes them: parsed against the
/// stored schemas and evaluated on records, compared with the same test in Swift on the models.
@Suite("Conditions written as text")
struct ConditionParserTests {
    /// A file store of seeded heroes, one publisher deleted so that some links dangle, and the
    /// heroes as the models read them back.
    static func makeStore(at path: String, count: Int, seed: UInt64) throws -> [QueryHero] {
        var world = QueryWorld(seed: seed)
        let heroes = (1...count).map { world.hero($0) }
        let store = try Store(path: path, models: [QueryHero.self])
        try store.write { try $0.add(contentsOf: heroes) }
        try store.write { try $0.delete(QueryPublisher.self, primaryKey: 4) }
        let stored = try store.objects(QueryHero.self).all()
        try store.close()
        return stored
    }

    static func identifiers(_ inspector: StoreInspector, where condition: String) throws -> [Int] {
        var identifiers: [Int] = []
        try inspector.forEachRecord(of: "QueryHero", where: condition) { record in
            if case .int(let value)? = record["identifier"] { identifiers.append(Int(value)) }
        }
        return identifiers
    }

    static let cases: [(String, @Sendable (QueryHero) -> Bool)] = [
        (#"name == "Hulk""#, { $0.name == "Hulk" }),
        (#"name != "Hulk""#, { $0.name != "Hulk" }),
        ("age >= 30", { $0.age >= 30 }),
        ("30 < age", { 30 < $0.age }),
        ("age <= 10 || age > 90", { $0.age <= 10 || $0.age > 90 }),
        ("!(age < 50) && isActive", { !($0.age < 50) && $0.isActive }),
        ("!isActive", { !$0.isActive }),
        ("isActive == false", { $0.isActive == false }),
        ("realName == nil", { $0.realName == nil }),
        ("realName != nil && realName >= \"T\"", { $0.realName.map { $0 >= "T" } ?? false }),
        (#"publisher.name == "Marvel""#, { $0.publisher?.name == "Marvel" }),
        (#"publisher.name != "Marvel""#, { $0.publisher?.name != "Marvel" }),
        ("publisher.country == nil", { $0.publisher?.country == nil }),
        ("publisher == nil", { $0.publisher == nil }),
        ("rating > 50.5", { $0.rating > 50.5 }),
        ("rating < 42", { $0.rating < 42 }),
        (#"side == "villain""#, { $0.side == QuerySide.villain }),
        (#"joined < "2002-01-01T00:00:00Z""#, { $0.joined < Date(timeIntervalSinceReferenceDate: 31_536_000) }),
        (#"name == "\u{3A9}" || name == "\u{C9}lodie""#, { $0.name == "Ω" || $0.name == "Élodie" }),
        ("identifier > 10 && identifier <= 20 || identifier == 77", { $0.identifier > 10 && $0.identifier <= 20 || $0.identifier == 77 }),
        ("((((age > 5))))", { $0.age > 5 }),
    ]

    @Test("each condition selects what the same test selects on the models")
    func matchesSwift() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            let heroes = try Self.makeStore(at: path, count: 300, seed: SeededRandom.seed(default: 0xC0_0D17))
            let inspector = try StoreInspector(path: path)
            defer { try? inspector.close() }
            for (condition, matches) in Self.cases {
                let expected = heroes.filter(matches).map(\.identifier)
                #expect(try Self.identifiers(inspector, where: condition) == expected, "\(condition)")
                #expect(!expected.isEmpty, "\(condition) matches something")
            }
        }
    }

    static func kind(_ condition: String) -> QueryError.Kind? {
        guard let schema = Schemas().schema(named: "QueryHero") else { return nil }
        do {
            _ = try ConditionParser.parse(condition, schema: schema, schemas: Schemas(), root: PredicateExpressions.Variable<Int>().key)
            return nil
        } catch {
            return error.kind
        }
    }

    /// The query fixtures' schemas, without a store.
    struct Schemas: SchemaSource {
        func schema(named typeName: String) -> ObjectSchema? {
            switch typeName {
            case "QueryHero": try? QueryHero.objectSchema()
            case "QueryPublisher": try? QueryPublisher.objectSchema()
            case "QueryDog": try? QueryDog.objectSchema()
            default: nil
            }
        }
        func isLinkTarget(_ typeName: String) -> Bool { typeName != "QueryHero" }
    }

    @Test("mistakes are typed errors that say where and what")
    func errors() throws {
        #expect(Self.kind("name = \"Hulk\"") == .syntax(offset: 5, message: "use == to compare"))
        #expect(Self.kind("age > ") == .syntax(offset: 6, message: "expected a value after the comparison, found the end"))
        #expect(Self.kind("(age > 3") == .syntax(offset: 8, message: "expected ), found the end"))
        #expect(Self.kind("age > 3)") == .syntax(offset: 7, message: "expected && or || or the end, found )"))
        #expect(Self.kind("name == \"Hulk") == .syntax(offset: 8, message: "the string has no closing quote"))
        #expect(Self.kind("age & 3") == .syntax(offset: 4, message: "use && for and, || for or"))
        #expect(Self.kind("age == name") == .syntax(offset: 7, message: "expected a value after the comparison, found the property name"))
        #expect(Self.kind("3 == 3") == .syntax(offset: 5, message: "compare a value with a property, found 3"))
        #expect(Self.kind("") == .syntax(offset: 0, message: "expected a property name, a value, ! or (, found the end"))
        #expect(Self.kind("age > 99999999999999999999") == .syntax(offset: 6, message: "99999999999999999999 is too large for an integer"))
        #expect(Self.kind("nickname == 1") == .unknownProperty(typeName: "QueryHero", property: "nickname"))
        #expect(Self.kind("scratch == 1") == .ignoredProperty(typeName: "QueryHero", property: "scratch"))
        #expect(Self.kind("age == \"old\"") == .valueMismatch(typeName: "QueryHero", property: "age", expected: "Int", found: "String"))
        #expect(Self.kind("age") == .valueMismatch(typeName: "QueryHero", property: "age", expected: "Int", found: "Bool"))
        #expect(Self.kind("isActive < true") == .unorderedComparison(typeName: "QueryHero", property: "isActive", kind: "Bool"))
        #expect(Self.kind("realName < nil") == .unorderedComparison(typeName: "QueryHero", property: "realName", kind: "String"))
        #expect(Self.kind("joined < \"yesterday\"") == .valueMismatch(typeName: "QueryHero", property: "joined", expected: "Date", found: "String"))
        #expect(Self.kind(String(repeating: "(", count: 65) + "isActive" + String(repeating: ")", count: 65)) == .nestingTooDeep(limit: 64))
        #expect(Self.kind(String(repeating: "!", count: 100_000) + "isActive") == .nestingTooDeep(limit: 64))
        #expect(Self.kind(String(repeating: "(", count: 64) + "isActive" + String(repeating: ")", count: 64)) == nil)
        let longChain = Array(repeating: "age == 3", count: 20_000).joined(separator: " || ")
        #expect(Self.kind(longChain) == nil, "a long chain parses into a shallow tree")
    }

    /// Random strings made of the language's pieces and of arbitrary characters, and mutations
    /// of valid conditions: each parses or throws a QueryError, and evaluating a parsed one on
    /// real records never traps.
    @Test("3,000 random and mutated conditions never trap: they parse or throw a QueryError")
    func fuzz() throws {
        let seed = SeededRandom.seed(default: 0xF022_C0DE)
        var random = SeededRandom(seed: seed)
        let pieces = ["name", "age", "realName", "publisher.name", "publisher", "tags", "dogs", "joined", "isActive",
                      "rating", "publisher.country", "scratch", "x.y", "..", ".", "==", "!=", "<", "<=", ">", ">=",
                      "=", "&&", "||", "&", "|", "!", "(", ")", "\"", "\"Hulk\"", "\"\\u{41}\"", "\"\\u{D800}\"",
                      "\"\\q\"", "\\", "42", "-7", "-", "4.5", "1e308", "1e309", "1e", "18446744073709551615",
                      "true", "false", "nil", " ", "\n", "é", "🇫🇷", "٣", "_", "0x1F"]
        let valid = Self.cases.map(\.0)
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            _ = try Self.makeStore(at: path, count: 12, seed: seed)
            let inspector = try StoreInspector(path: path)
            defer { try? inspector.close() }
            var parsed = 0
            for round in 0..<3000 {
                var text: String
                switch round % 3 {
                case 0:
                    text = (0..<Int.random(in: 0...12, using: &random)).map { _ in random.pick(pieces) }.joined(separator: random.chance(50) ? " " : "")
                case 1:
                    var characters = Array(random.pick(valid))
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        let position = Int.random(in: 0...characters.count, using: &random)
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0 where position < characters.count: characters.remove(at: position)
                        case 1: characters.insert(contentsOf: random.pick(pieces), at: position)
                        default: characters.insert(Character(UnicodeScalar(UInt8.random(in: 0...127, using: &random))), at: position)
                        }
                    }
                    text = String(characters)
                default:
                    text = random.string()
                }
                do {
                    var count = 0
                    try inspector.forEachRecord(of: "QueryHero", where: text) { _ in count += 1 }
                    parsed += 1
                } catch let error as QueryError {
                    #expect(!error.description.isEmpty)
                } catch {
                    Issue.record("\(text.debugDescription): not a QueryError: \(error)")
                }
            }
            #expect(parsed > 50, "some conditions are valid")
        }
    }
}
