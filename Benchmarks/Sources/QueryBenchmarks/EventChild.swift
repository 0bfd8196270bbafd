import BenchmarkSupport
import Foundation

// The child side of the events' cells (`--shape events`): one process per cell and repetition,
// on the shared store of events (or, for the after-insert cell, a copy of it).

private let origin = ContinuousClock.now

/// Seconds since this process first asked, on the monotonic clock.
private func now() -> Double {
    let components = origin.duration(to: .now).components
    return Double(components.seconds) + Double(components.attoseconds) / 1e18
}

/// Runs `commit` outside the measured span: `callgrind-query.sh` stops counting inside it.
@inline(never)
func commitBetweenQueries(_ number: Int, _ commit: (Int) throws -> Void) rethrows {
    try commit(number)
}

/// Runs `count` times a commit (untimed) then a query (timed); returns the wall-clock and CPU
/// seconds per query. `callgrind-query.sh` counts what runs in here, the commits excepted.
@inline(never)
func timedPassesAfterCommits(_ count: Int, commit: (Int) throws -> Void, query: () throws -> Void) rethrows
    -> (seconds: Double, cpuSeconds: Double, operations: Int) {
    var seconds = 0.0
    var cpuSeconds = 0.0
    for number in 0..<count {
        try commitBetweenQueries(number, commit)
        let start = now()
        let cpu = processorSeconds()
        try query()
        cpuSeconds += processorSeconds() - cpu
        seconds += now() - start
    }
    return (seconds / Double(count), cpuSeconds / Double(count), count)
}

/// The shared store of events, in the parent's scratch directory.
func eventStorePath(directory: String, objects: Int, fileExtension: String) -> String {
    "\(directory)/events-\(objects).\(fileExtension)"
}

/// Builds the shared store of `objects` events for `System`; returns what was built.
func prepareEvents<System: EventQuerySystem>(_: System.Type, sizes: QuerySizes, directory: String) throws -> String {
    let path = eventStorePath(directory: directory, objects: sizes.objects, fileExtension: System.fileExtension)
    System.removeFiles(for: path)
    let start = Date()
    let created = try System.create(path: path)
    try created.insert(EventFixtures.events(objects: sizes.objects, seed: sizes.seed))
    try created.close()
    let reopened = try System(path: path)
    guard try reopened.count() == sizes.objects else { throw QueryBenchmarkFailure("prepare: \(path) does not hold \(sizes.objects) events") }
    try reopened.close()
    return String(format: "%d events in %.1f s", sizes.objects, Date().timeIntervalSince(start))
}

/// Runs one of the events' cells with `System` in this process.
struct EventCellRunner<System: EventQuerySystem> {
    let cell: QueryCell
    let sizes: QuerySizes
    let directory: String

    /// Queries timed after commits in the after-insert cell (`callgrind-query.sh` divides by it).
    static var queriesAfterCommits: Int { 200 }

    private func failure(_ text: String) -> QueryBenchmarkFailure {
        QueryBenchmarkFailure("\(cell.name): \(text)")
    }

    /// Checks that `got` are the events `expected`, in that order, every field.
    private func check(_ got: [Event], _ expected: some Collection<Event>, _ label: String) throws {
        guard got.count == expected.count else {
            throw failure("\(label): \(got.count) events, expected \(expected.count)")
        }
        for (found, wanted) in zip(got, expected) where found.fields != wanted.fields {
            throw failure("\(label): got \(found.fields), expected \(wanted.fields)")
        }
    }

    func run() throws -> QueryCellResult {
        let objects = sizes.objects
        let seed = sizes.seed
        var all = EventFixtures.events(objects: objects, seed: seed)
        var random = SplitMix64(seed: seed &+ 23)
        let sequences = (0..<500).map { _ in 1 + Int(random.next() % UInt64(objects)) }
        let kinds = (0..<200).map { _ in Int(random.next() % UInt64(EventFixtures.kinds)) }
        let ranges = (0..<20).map { _ in
            let start = 1 + Int(random.next() % UInt64(max(objects - 1_000, 1)))
            return start..<(start + 1_000)
        }
        let categories = [0, 1, 3, 7, 15, 25, 35, 39].map { EventFixtures.categories[$0] }
        let byStart = all.sorted { $0.startsAt < $1.startsAt }

        let shared = eventStorePath(directory: directory, objects: objects, fileExtension: System.fileExtension)
        var path = shared
        if cell.workload == .eventNewest20AfterInsert {
            // Commits go to a copy, so the shared store stays as the other cells expect it.
            path = "\(directory)/events-copy-\(getpid()).\(System.fileExtension)"
            System.removeFiles(for: path)
            try FileManager.default.copyItem(atPath: shared, toPath: path)
        }
        defer { if path != shared { System.removeFiles(for: path) } }
        let system = try System(path: path)
        guard try system.count() == objects else { throw failure("the store does not hold \(objects) events") }
        let plan = try system.checkPlan(cell.workload, sequence: sequences[0], kind: kinds[0], range: ranges[0], category: categories[0])

        // Every query once, checked: this is also the warm-up of the timed loop.
        var verified = 0
        var timing: (seconds: Double, cpuSeconds: Double, operations: Int)
        switch cell.workload {
        case .eventEqual:
            let bySequence = Dictionary(uniqueKeysWithValues: all.map { ($0.sequence, $0) })
            for sequence in sequences {
                try check(try system.withSequence(sequence), bySequence[sequence].map { [$0] } ?? [], "sequence \(sequence)")
                verified += 1
            }
            timing = try timedPasses {
                for sequence in sequences { blackHole(try system.withSequence(sequence)) }
                return sequences.count
            }
        case .eventKind:
            let byKind = Dictionary(grouping: all, by: \.kind).mapValues { $0.sorted { $0.code < $1.code } }
            for kind in kinds {
                let expected = byKind[kind] ?? []
                guard (1...30).contains(expected.count) else { throw failure("kind \(kind) holds \(expected.count) events") }
                try check(try system.ofKind(kind), expected, "kind \(kind)")
                verified += expected.count
            }
            timing = try timedPasses {
                for kind in kinds { blackHole(try system.ofKind(kind)) }
                return kinds.count
            }
        case .eventRange:
            let bySequence = all.sorted { $0.sequence < $1.sequence }
            for range in ranges {
                let expected = bySequence[(range.lowerBound - 1)..<min(range.upperBound - 1, objects)]
                try check(try system.sequences(in: range), expected, "sequences \(range)")
                verified += expected.count
            }
            timing = try timedPasses {
                for range in ranges { blackHole(try system.sequences(in: range)) }
                return ranges.count
            }
        case .eventFirst20:
            try check(try system.earliest(20), byStart.prefix(20), "earliest 20")
            verified = 20
            timing = try timedPasses {
                for _ in 0..<100 { blackHole(try system.earliest(20)) }
                return 100
            }
        case .eventNewest20:
            try check(try system.latest(20), byStart.reversed().prefix(20), "latest 20")
            verified = 20
            timing = try timedPasses {
                for _ in 0..<100 { blackHole(try system.latest(20)) }
                return 100
            }
        case .eventNewest20InCategory:
            for category in categories {
                try check(try system.latest(20, category: category), byStart.reversed().lazy.filter { $0.category == category }.prefix(20), category)
                verified += 20
            }
            timing = try timedPasses {
                for _ in 0..<10 {
                    for category in categories { blackHole(try system.latest(20, category: category)) }
                }
                return 10 * categories.count
            }
        case .eventNewest20AfterInsert:
            // The first queries checked against the fixtures with the events inserted so far.
            let checked = 5
            for number in 0..<checked {
                let event = EventFixtures.inserted(number, objects: objects, seed: seed)
                try system.insert([event])
                all.append(event)
                let expected = all.sorted { $0.startsAt > $1.startsAt }.prefix(20)
                try check(try system.latest(20), expected, "latest 20 after \(number + 1) inserted")
                verified += 20
            }
            timing = try timedPassesAfterCommits(Self.queriesAfterCommits, commit: { number in
                try system.insert([EventFixtures.inserted(checked + number, objects: objects, seed: seed)])
            }, query: {
                blackHole(try system.latest(20))
            })
        default:
            throw failure("not a cell of the events")
        }
        try system.close()
        return QueryCellResult(cell: cell.name, seconds: timing.seconds, cpuSeconds: timing.cpuSeconds, operations: timing.operations,
                               verified: verified, plan: plan)
    }
}
