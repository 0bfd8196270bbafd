import Testing
@testable import MirrorStoreEngine

/// Bit flips and zero-filled spans must end in a typed error or in exactly a committed prefix
/// that ends before the damage: never a crash, never a damaged unit applied.
@Suite struct DamageTests {
    enum Outcome {
        case error(StorageError)
        case state(StoreState)
    }

    static func open(_ path: String, _ mode: EngineConfiguration.RecoveryMode) -> Outcome {
        do {
            return .state(try openState(path, fastConfiguration(mode)))
        } catch let error as StorageError {
            return .error(error)
        } catch {
            Issue.record("untyped error \(error)")
            return .error(StorageError(.closed))
        }
    }

    /// Checks one damaged image in both recovery modes. `firstDamaged` is the lowest changed byte.
    /// `lastDamaged` is the highest changed byte: damage is only provably not a torn tail when an
    /// intact unit follows it.
    static func check(
        _ damaged: [UInt8], firstDamaged: Int, lastDamaged: Int, recorded: RecordedStore, at path: String, context: String
    ) throws {
        let intactUnitFollows = recorded.unitEnds.dropLast().contains { $0 > lastDamaged }
        for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
            try writeFile(path, damaged)
            switch open(path, mode) {
            case .error(let error):
                if firstDamaged < LogHeader.size {
                    let isHeaderError: Bool
                    switch error.kind {
                    case .notAStore, .corrupted(_, 0, _), .newerFormat: isHeaderError = true
                    default: isHeaderError = false
                    }
                    #expect(isHeaderError, "\(context), \(mode): \(error)")
                } else if mode == .recoverValidPrefix {
                    Issue.record("\(context): point-in-time recovery failed: \(error)")
                } else if case .corrupted(_, let offset, _) = error.kind {
                    #expect(offset <= UInt64(firstDamaged), "\(context): reported \(offset)")
                } else {
                    Issue.record("\(context): unexpected error \(error)")
                }
            case .state(let state):
                // Accepted state must be a committed prefix whose units all end before the damage.
                let units = recorded.states.firstIndex(of: state)
                #expect(units != nil, "\(context), \(mode): state is no committed prefix: \(state)")
                if let units {
                    #expect(recorded.unitEnds[units] <= firstDamaged || units == 0, "\(context), \(mode): damaged unit applied")
                }
                if mode == .strict, firstDamaged >= LogHeader.size, intactUnitFollows {
                    Issue.record("\(context): damage before the last unit was not reported in strict mode")
                }
            }
        }
    }

    @Test func singleBitFlipsAreDetectedOrCutAway() throws {
        let directory = TemporaryDirectory()
        let seed = testSeed(0xB17F)
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 50, seed: seed)
        var generator = SeededGenerator(seed: seed)
        let path = directory.file("damaged.store")
        for round in 0..<1_000 {
            let offset = Int.random(in: 0..<recorded.bytes.count, using: &generator)
            let bit = UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
            var damaged = recorded.bytes
            damaged[offset] ^= bit
            try Self.check(damaged, firstDamaged: offset, lastDamaged: offset, recorded: recorded, at: path,
                           context: "seed \(seed), round \(round), flip bit \(bit) at \(offset)")
        }
    }

    @Test func zeroFilledSpansAreNeverApplied() throws {
        let directory = TemporaryDirectory()
        let seed = testSeed(0x2E60)
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 50, seed: seed)
        var generator = SeededGenerator(seed: seed)
        let path = directory.file("damaged.store")
        for round in 0..<300 {
            let start = Int.random(in: 0..<recorded.bytes.count, using: &generator)
            let length = Int.random(in: 1...(round % 3 == 0 ? 4_096 : 64), using: &generator)
            let end = min(recorded.bytes.count, start + length)
            var damaged = recorded.bytes
            damaged.replaceSubrange(start..<end, with: repeatElement(0, count: end - start))
            let changed = zip(damaged, recorded.bytes).indices(where: { $0.0 != $0.1 })
            guard let first = changed.first, let last = changed.last else { continue }
            try Self.check(damaged, firstDamaged: first, lastDamaged: last, recorded: recorded, at: path,
                           context: "seed \(seed), round \(round), zeros at \(start)..<\(end)")
        }
    }

    @Test func damageIsReportedWithItsOffsetAndVerifyFindsIt() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 10, seed: 3)
        let path = directory.file("damaged.store")
        let unitStart = recorded.unitEnds[4]
        var damaged = recorded.bytes
        damaged[unitStart + LogFrame.headerSize] ^= 0x10
        try writeFile(path, damaged)
        #expect(throws: StorageError(.corrupted(
            path: path, offset: UInt64(unitStart),
            reason: "the unit's checksum does not match its contents, and a valid unit follows it"))) {
            try StorageEngine(path: path, configuration: fastConfiguration())
        }
        let report = try verifyStoreFile(at: path)
        #expect(report.firstDamageOffset == UInt64(unitStart))
        #expect(report.unitsChecked == 4)
        #expect(!report.isTornTail)
        #expect(report.description == "'\(path)' has damage at byte offset \(unitStart) (the unit's checksum does not match its contents, and a valid unit follows it): 4 units checked, last sequence 4, valid up to byte \(unitStart) of \(recorded.bytes.count).")
        // Point-in-time recovery keeps the four good units and cuts the rest.
        let state = try openState(path, fastConfiguration(.recoverValidPrefix))
        #expect(state == recorded.states[4])
        #expect(try verifyStoreFile(at: path).isIntact)
    }
}

private extension Sequence {
    func indices(where predicate: (Element) -> Bool) -> [Int] {
        enumerated().filter { predicate($0.element) }.map(\.offset)
    }
}
