import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import Testing

@Suite("Kinds inside jsonb")
struct JSONKindChangeTests {
    private static let integers: [PropertyKind] = [.int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64]

    /// A random kind of integers in containers, as `jsonb` holds them.
    private static func kind(_ random: inout SeededRandom, depth: Int = 0) -> PropertyKind {
        let kind: PropertyKind
        switch depth < 3 ? Int.random(in: 0..<5, using: &random) : 0 {
        case 0: kind = random.pick(integers)
        case 1: kind = .list(Self.kind(&random, depth: depth + 1))
        case 2: kind = .set(Self.kind(&random, depth: depth + 1))
        case 3: kind = .dictionary(Self.kind(&random, depth: depth + 1))
        default: kind = .string
        }
        return random.chance(25) ? .optional(kind) : kind
    }

    /// The same shape with other integer kinds, arrays and sets swapped, optionals toggled.
    private static func reshaped(_ kind: PropertyKind, _ random: inout SeededRandom) -> PropertyKind {
        var inner = kind
        if case .optional(let wrapped) = kind { inner = wrapped }
        let changed: PropertyKind = switch inner {
        case .list(let element), .set(let element):
            random.chance(50) ? .list(reshaped(element, &random)) : .set(reshaped(element, &random))
        case .dictionary(let element): .dictionary(reshaped(element, &random))
        case .string: .string
        default: random.pick(integers)
        }
        return random.chance(25) ? .optional(changed) : changed
    }

    /// A random `jsonb` value of `kind`: integers of any width and sign, so some do not fit.
    private static func json(of kind: PropertyKind, _ random: inout SeededRandom) -> JSONValue {
        if case .optional(let wrapped) = kind { return random.chance(20) ? .null : json(of: wrapped, &random) }
        switch kind {
        case .list(let element), .set(let element):
            return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in json(of: element, &random) })
        case .dictionary(let element):
            return .object(Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &random)).map { ("k\($0)", json(of: element, &random)) }))
        case .string:
            return .string(random.string())
        default:
            return .string(random.chance(50) ? String(random.integer(Int64.self)) : String(random.integer(UInt64.self) >> UInt64.random(in: 0...63, using: &random)))
        }
    }

    /// Spellings read back as the kinds that made them; damaged ones as some kind or none,
    /// without trapping; nesting past the bound as none.
    @Test func kindSpellingsReadBackAndDamageIsRefused() {
        var random = SeededRandom(seed: 0x5BE11)
        for _ in 0..<2_000 {
            let kind = Self.kind(&random)
            #expect(KindSpelling.kind(of: kind.description) == kind, "\(kind)")
            var damaged = Array(kind.description)
            if !damaged.isEmpty {
                damaged.remove(at: Int.random(in: 0..<damaged.count, using: &random))
                _ = KindSpelling.kind(of: String(damaged))
            }
        }
        #expect(KindSpelling.kind(of: "Address?") == .optional(.object(typeName: "Address")))
        #expect(KindSpelling.kind(of: "[String: Int8") == nil)
        #expect(KindSpelling.kind(of: "") == nil)
        #expect(KindSpelling.kind(of: String(repeating: "[", count: 10_000) + "Int" + String(repeating: "]", count: 10_000)) == nil)
        #expect(KindSpelling.kind(of: "Int" + String(repeating: "?", count: 10_000)) == nil)
    }

    /// The check finds a misfit exactly when decoding the `jsonb` under the new kind does not
    /// give a value the new kind accepts: the general route of a read after the migration.
    @Test func misfitsAreWhatAReadUnderTheNewKindRefuses() throws {
        let models = try BackendModels(models: [])
        var random = SeededRandom(seed: 0x715F)
        var seen = (fits: 0, misfits: 0)
        for _ in 0..<3_000 {
            let old = Self.kind(&random)
            let new = Self.reshaped(old, &random)
            let change = try #require(JSONKindChange(from: old, to: new, renamedTypes: [:]), "\(old) to \(new)")
            let value = Self.json(of: old, &random)
            let coding = JSONCoding(models: models, typeName: "T", property: "p")
            let readable = (try? coding.decode(value, kind: new)).map(new.accepts) ?? false
            let misfit = change.firstMisfit(in: value)
            #expect((misfit == nil) == readable, "\(value) from \(old) to \(new): \(String(describing: misfit))")
            if misfit == nil { seen.fits += 1 } else { seen.misfits += 1 }
        }
        #expect(seen.fits > 100 && seen.misfits > 100, "\(seen)")
        // Kinds no rule converts.
        #expect(JSONKindChange(from: .dictionary(.int), to: .dictionary(.string), renamedTypes: [:]) == nil)
        #expect(JSONKindChange(from: .list(.int), to: .dictionary(.int), renamedTypes: [:]) == nil)
        #expect(JSONKindChange(from: .object(typeName: "Writer"), to: .object(typeName: "Author"), renamedTypes: ["Writer": "Author"]) != nil)
    }
}
