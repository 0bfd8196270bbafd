import Foundation
import Testing
@testable import MirrorStore

final class Ledger: Persistable {
    var identifier = 0
    var amount = Decimal()
    var fee: Decimal?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Arithmetic on small `Decimal`s is computed on records with Foundation's operators, as the
/// models' evaluation computes it; larger ones are left to the models.
@Suite("Decimal arithmetic")
struct DecimalArithmeticTests {
    /// Small values, computed on records, and large ones (more digits, a far exponent), left to
    /// the models; none on which Swift's operators trap in these predicates.
    static let amounts: [Decimal] = [0, -1, Decimal(string: "0.1") ?? 0, Decimal(string: "-2.5") ?? 0, 1_000_000,
                                     Decimal(string: "99999999999999.5") ?? 0, Decimal(string: "12345678901234567890.123") ?? 0,
                                     Decimal(string: "1e-120") ?? 0, Decimal(string: "1e40") ?? 0]

    @Test("+, -, * and a prefix - on decimals answer as Swift does, decided on records")
    func decimalArithmetic() throws {
        let ledgers = (1...90).map { identifier in
            let ledger = Ledger()
            ledger.identifier = identifier
            ledger.amount = Self.amounts[identifier % Self.amounts.count]
            ledger.fee = identifier % 4 == 0 ? nil : Self.amounts[(identifier / 3) % Self.amounts.count]
            return ledger
        }
        let store = try Store.inMemory(models: [Ledger.self])
        try store.write { try $0.add(contentsOf: ledgers) }
        func check(_ predicate: Predicate<Ledger>, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let results = try store.objects(Ledger.self).filter(predicate)
            let expected = try ledgers.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
            #expect(results.plan.filter == .records, "plan: \(results.plan)", sourceLocation: sourceLocation)
        }
        #expect(ledgers.contains { $0.amount * 2 > 10 } && ledgers.contains { !($0.amount * 2 > 10) })
        // Small operands are computed; large ones are not.
        #expect(DecimalArithmetic.apply(.multiply, Decimal(string: "-2.5") ?? 0, 4) == -10)
        #expect(DecimalArithmetic.apply(.add, Decimal(string: "0.1") ?? 0, Decimal(string: "0.1") ?? 0) == Decimal(string: "0.2"))
        #expect(DecimalArithmetic.apply(.add, Decimal(string: "1e40") ?? 0, 1) == nil)
        #expect(DecimalArithmetic.negate(Decimal(string: "12345678901234567890.123") ?? 0) == nil)
        let tenth = Decimal(string: "0.1") ?? 0, limit = Decimal(10)
        try check(#Predicate { $0.amount * 2 > limit })
        try check(#Predicate { $0.amount + tenth == tenth + tenth })
        try check(#Predicate { -$0.amount < 0 })
        try check(#Predicate { $0.amount - $0.amount == 0 })
        try check(#Predicate { $0.amount * 3 < $0.amount })
        try check(#Predicate { ($0.fee ?? 0) * 3 >= 1 || $0.amount - 1 < -limit })
        try check(#Predicate { ($0.fee ?? -1) + $0.amount != $0.amount })
    }
}
