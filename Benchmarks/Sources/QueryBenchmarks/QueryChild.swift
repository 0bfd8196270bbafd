import BenchmarkSupport
import CMallocStatistics
import Foundation
import MirrorStore

// The child side: one process per cell and repetition. A child opens (or builds) its store,
// warms up, checks every query's result and plan against the fixtures, then times the queries.

private let origin = ContinuousClock.now

/// Seconds since this process first asked, on the monotonic clock.
private func now() -> Double {
    let components = origin.duration(to: .now).components
    return Double(components.seconds) + Double(components.attoseconds) / 1e18
}

/// CPU seconds this process has used, on every thread: less disturbed than the wall clock when
/// other work shares the cores.
func processorSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Runs `pass` once to size the loop, then as many times as fill about `budget` seconds; returns
/// the wall-clock and CPU seconds per operation (`pass` returns how many operations it did).
@inline(never)
func timedPasses(budget: Double = 0.5, _ pass: () throws -> Int) rethrows -> (seconds: Double, cpuSeconds: Double, operations: Int) {
    let start = now()
    _ = try pass()
    let once = max(now() - start, 1e-9)
    let passes = max(1, Int((budget / once).rounded(.up)))
    var operations = 0
    let timed = now()
    let cpu = processorSeconds()
    for _ in 0..<passes { operations += try pass() }
    let cpuSeconds = processorSeconds() - cpu
    return ((now() - timed) / Double(operations), cpuSeconds / Double(operations), operations)
}

/// Runs one cell with `System` in this process.
struct QueryCellRunner<System: QuerySystem> {
    let cell: QueryCell
    let sizes: QuerySizes
    let directory: String

    private var seed: UInt64 { sizes.seed }

    func run() throws -> QueryCellResult {
        switch cell.workload {
        case .insert: try insert()
        case .open: try open(plain: false)
        case .openPlain: try open(plain: true)
        case .firstQuery: try firstQuery()
        case .firstScreen: try firstScreen(evicted: false)
        case .firstScreenEvicted: try firstScreen(evicted: true)
        case .compoundEqual, .insensitivePrefix: try memberQuery()
        default: try query()
        }
    }

    private func failure(_ text: String) -> QueryBenchmarkFailure {
        QueryBenchmarkFailure("\(cell.name): \(text)")
    }

    /// Checks that `got` are the customers `expected`, in that order, every field.
    private func check(_ got: [Customer], _ expected: [Customer], _ label: String) throws {
        guard got.count == expected.count else {
            throw failure("\(label): \(got.count) customers, expected \(expected.count)")
        }
        for (found, wanted) in zip(got, expected) where found.fields != wanted.fields {
            throw failure("\(label): got \(found.fields), expected \(wanted.fields)")
        }
    }

    private func query() throws -> QueryCellResult {
        let all = QueryFixtures.customers(1...sizes.objects, seed: seed)
        let byCreation = all.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        let emails = QueryFixtures.sample(500, of: sizes.objects, seed: seed).map { all[$0 - 1].email }
        let narrow = QueryFixtures.windows(20, fraction: 0.01, seed: seed)
        let wide = QueryFixtures.windows(20, fraction: 0.1, seed: seed &+ 1)
        let cities = Array(QueryFixtures.cities.prefix(10))
        // `score * 2 - 100` above these holds for scores above 9,900 to 9,945: about 1%.
        let bounds = (0..<10).map { 19_700 + Double($0) * 10 }

        let path = sharedStorePath(directory: directory, name: "customers", objects: sizes.objects, fileExtension: System.fileExtension)
        let system = try System(path: path)
        try system.warmUp()
        guard try system.count() == sizes.objects else { throw failure("the store does not hold \(sizes.objects) customers") }
        let plan = try system.checkPlan(cell.workload, email: emails[0], window: narrow[0], city: cities[0], bound: bounds[0])

        // Every query once, checked: this is also the warm-up of the timed loop.
        var verified = 0
        let pass: () throws -> Int
        switch cell.workload {
        case .equal:
            let byEmail = Dictionary(uniqueKeysWithValues: all.map { ($0.email, $0) })
            for email in emails {
                try check(try system.withEmail(email), byEmail[email].map { [$0] } ?? [], email)
                verified += 1
            }
            pass = {
                for email in emails { blackHole(try system.withEmail(email)) }
                return emails.count
            }
        case .range:
            for window in narrow {
                let expected = byCreation.filter { window.contains($0.createdAt) }
                guard expected.count * 200 > sizes.objects && expected.count * 50 < sizes.objects else { throw failure("a window holds \(expected.count) customers") }
                try check(try system.created(in: window), expected, "\(window)")
                verified += expected.count
            }
            pass = {
                for window in narrow { blackHole(try system.created(in: window)) }
                return narrow.count
            }
        case .first20:
            try check(try system.firstCreated(20), Array(byCreation.prefix(20)), "first 20")
            verified = 20
            pass = {
                for _ in 0..<100 { blackHole(try system.firstCreated(20)) }
                return 100
            }
        case .scan:
            for city in cities {
                try check(try system.living(in: city), all.filter { $0.city == city }, city)
                verified += 1
            }
            pass = {
                for city in cities { blackHole(try system.living(in: city)) }
                return cities.count
            }
        case .scanNegative:
            for city in cities {
                try check(try system.negativeAgeOrLiving(in: city), all.filter { $0.age < -50 || $0.city == city }, city)
                verified += 1
            }
            pass = {
                for city in cities { blackHole(try system.negativeAgeOrLiving(in: city)) }
                return cities.count
            }
        case .scanArithmetic:
            for bound in bounds {
                let expected = all.filter { $0.score * 2 - 100 > bound }
                guard expected.count * 200 > sizes.objects && expected.count * 50 < sizes.objects else { throw failure("\(bound) holds \(expected.count) customers") }
                try check(try system.scoring(above: bound), expected, "score * 2 - 100 > \(bound)")
                verified += 1
            }
            pass = {
                for bound in bounds { blackHole(try system.scoring(above: bound)) }
                return bounds.count
            }
        case .count:
            for window in wide {
                let expected = all.count { window.contains($0.createdAt) }
                let got = try system.count(createdIn: window)
                guard got == expected else { throw failure("\(window): counted \(got), expected \(expected)") }
                verified += 1
            }
            pass = {
                var total = 0
                for window in wide { total &+= try system.count(createdIn: window) }
                blackHole(total)
                return wide.count
            }
        case .sum:
            let expected = all.map(\.score).reduce(0, +)
            let got = try system.sumOfScores()
            // SQLite sums with extra precision; the store adds in key order, as Swift's reduce does.
            guard abs(got - expected) <= abs(expected) * 1e-9 else { throw failure("sum \(got), expected \(expected)") }
            verified = 1
            pass = {
                blackHole(try system.sumOfScores())
                return 1
            }
        case .average:
            let expected = Double(all.map(\.age).reduce(0, +)) / Double(all.count)
            let got = try system.averageAge() ?? .nan
            guard abs(got - expected) <= abs(expected) * 1e-9 else { throw failure("average \(got), expected \(expected)") }
            verified = 1
            pass = {
                blackHole(try system.averageAge())
                return 1
            }
        case .max:
            let expected = all.map(\.createdAt).max()
            let got = try system.latestCreated()
            guard got == expected else { throw failure("max \(String(describing: got)), expected \(String(describing: expected))") }
            verified = 1
            pass = {
                for _ in 0..<100 { blackHole(try system.latestCreated()) }
                return 100
            }
        default:
            throw failure("not a query cell of the customers")
        }
        let (seconds, cpuSeconds, operations) = try timedPasses(pass)
        try system.close()
        return QueryCellResult(cell: cell.name, seconds: seconds, cpuSeconds: cpuSeconds, operations: operations, verified: verified, plan: plan)
    }

    /// Checks that `got` are the members `expected`, in that order, every field.
    private func check(_ got: [Member], _ expected: [Member], _ label: String) throws {
        guard got.count == expected.count else {
            throw failure("\(label): \(got.count) members, expected \(expected.count)")
        }
        for (found, wanted) in zip(got, expected) where found.fields != wanted.fields {
            throw failure("\(label): got \(found.fields), expected \(wanted.fields)")
        }
    }

    /// The cells on the members' store: compound-index equality and case-insensitive prefixes.
    private func memberQuery() throws -> QueryCellResult {
        let all = QueryFixtures.members(1...sizes.objects, objects: sizes.objects, seed: seed)
        let sample = QueryFixtures.sample(500, of: sizes.objects, seed: seed).map { all[$0 - 1] }
        let pairs = sample.map { ($0.team, $0.number) }
        // 3-letter prefixes of 100 members' names, every other one upper-cased, the rest lower-cased:
        // both systems must ignore case to answer.
        let prefixes = sample.prefix(100).enumerated().map { position, member in
            let prefix = String(member.name.prefix(3))
            return position.isMultiple(of: 2) ? prefix.uppercased() : prefix.lowercased()
        }

        let path = sharedStorePath(directory: directory, name: "members", objects: sizes.objects, fileExtension: System.fileExtension)
        let system = try System(membersPath: path)
        try system.warmUp()
        guard try system.countMembers() == sizes.objects else { throw failure("the store does not hold \(sizes.objects) members") }
        let plan = try system.checkMemberPlan(cell.workload, team: pairs[0].0, number: pairs[0].1, prefix: prefixes[0])

        // Every query once, checked: this is also the warm-up of the timed loop.
        var verified = 0
        let pass: () throws -> Int
        switch cell.workload {
        case .compoundEqual:
            let byPair = Dictionary(uniqueKeysWithValues: all.map { ("\($0.team)#\($0.number)", $0) })
            for (team, number) in pairs {
                try check(try system.member(team: team, number: number), byPair["\(team)#\(number)"].map { [$0] } ?? [], "\(team) #\(number)")
                verified += 1
            }
            pass = {
                for (team, number) in pairs { blackHole(try system.member(team: team, number: number)) }
                return pairs.count
            }
        case .insensitivePrefix:
            for prefix in prefixes {
                let folded = prefix.lowercased()
                let expected = all.filter { $0.name.lowercased().hasPrefix(folded) }
                guard (1...40).contains(expected.count) else { throw failure("\(prefix) matches \(expected.count) members") }
                try check(try system.members(namePrefix: prefix), expected, prefix)
                verified += expected.count
            }
            pass = {
                for prefix in prefixes { blackHole(try system.members(namePrefix: prefix)) }
                return prefixes.count
            }
        default:
            throw failure("not a query cell of the members")
        }
        let (seconds, cpuSeconds, operations) = try timedPasses(pass)
        try system.close()
        return QueryCellResult(cell: cell.name, seconds: seconds, cpuSeconds: cpuSeconds, operations: operations, verified: verified, plan: plan)
    }

    private func insert() throws -> QueryCellResult {
        let customers = QueryFixtures.customers(1...sizes.objects, seed: seed)
        // The write path's first use (reflection plans, statement compilation) on a throwaway store.
        let warmUpPath = "\(directory)/warm-up-\(getpid()).\(System.fileExtension)"
        let warmUp = try System.create(path: warmUpPath)
        try warmUp.insert(QueryFixtures.customers(1...1_000, seed: seed &+ 3))
        try warmUp.close()
        System.removeFiles(for: warmUpPath)

        let path = "\(directory)/insert-\(getpid()).\(System.fileExtension)"
        defer { System.removeFiles(for: path) }
        let system = try System.create(path: path)
        ResidentSet.resetPeak()
        let residentBefore = ResidentSet.current().current
        let start = now()
        let cpu = processorSeconds()
        try system.insert(customers)
        let cpuSeconds = processorSeconds() - cpu
        let seconds = now() - start
        let peakGrowth = max(0, ResidentSet.current().peak - residentBefore)
        try system.close()

        // Reopened: every customer there, and both indexes answer.
        let reopened = try System(path: path)
        try reopened.warmUp()
        guard try reopened.count() == sizes.objects else { throw failure("the store does not hold \(sizes.objects) customers") }
        let sample = QueryFixtures.sample(200, of: sizes.objects, seed: seed)
        for id in sample {
            let customer = customers[id - 1]
            try check(try reopened.withEmail(customer.email), [customer], customer.email)
        }
        let window = QueryFixtures.windows(1, fraction: 0.01, seed: seed)[0]
        let expected = customers.filter { window.contains($0.createdAt) }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        try check(try reopened.created(in: window), expected, "\(window)")
        let plan = try reopened.checkPlan(.equal, email: customers[0].email, window: window, city: "", bound: 0)
            + " | " + reopened.checkPlan(.range, email: customers[0].email, window: window, city: "", bound: 0)
        try reopened.close()
        var result = QueryCellResult(cell: cell.name, seconds: seconds / Double(sizes.objects), cpuSeconds: cpuSeconds / Double(sizes.objects), operations: sizes.objects,
                                     verified: sample.count + expected.count, plan: plan)
        result.peakGrowth = peakGrowth
        return result
    }

    /// Opens the shared large store, its file in the page cache, and reads one customer; reports
    /// what the open left allocated.
    private func open(plain: Bool) throws -> QueryCellResult {
        let name = plain ? "plain" : "customers"
        let path = sharedStorePath(directory: directory, name: name, objects: sizes.openObjects, fileExtension: MirrorStoreQueries.fileExtension)
        readThrough(path)
        let id = sizes.openObjects / 2 + 1
        let expected = QueryFixtures.customer(id: id, seed: seed)
        let allocatedBefore = malloc_statistics_allocated_bytes()
        let opened = try OpenedStore(path: path, plain: plain, id: id)
        let allocatedGrowth = Int(malloc_statistics_allocated_bytes()) - Int(allocatedBefore)
        guard opened.fields == expected.fields else { throw failure("customer \(id) reads back as \(String(describing: opened.fields))") }
        var plan = ""
        if !plain {
            // The rebuilt indexes answer (outside the timed open).
            let email = expected.email
            let results = try opened.store.objects(Customer.self).filter(#Predicate { $0.email == email })
            guard results.count == 1, results[0].fields == expected.fields, results.plan.indexName == "Customer.email" else {
                throw failure("the email index does not find customer \(id): \(results.plan)")
            }
            let first = try opened.store.objects(Customer.self).sorted(using: SortDescriptor(\.createdAt))
            guard first.count == sizes.openObjects, first.plan.indexName == "Customer.createdAt" else {
                throw failure("the createdAt index is not whole: \(first.plan)")
            }
            plan = results.plan.description + " | " + first.plan.description
        }
        try opened.store.close()
        var result = QueryCellResult(cell: cell.name, seconds: opened.seconds, cpuSeconds: opened.cpuSeconds, operations: 1, verified: 1, plan: plan)
        result.allocatedGrowth = allocatedGrowth
        return result
    }

    /// Opens the shared large store (untimed), then times the type's first query.
    private func firstQuery() throws -> QueryCellResult {
        let path = sharedStorePath(directory: directory, name: "customers", objects: sizes.openObjects, fileExtension: MirrorStoreQueries.fileExtension)
        readThrough(path)
        let id = sizes.openObjects / 3 + 1
        let expected = QueryFixtures.customer(id: id, seed: seed)
        let store = try Store(path: path, models: [Customer.self], configuration: .benchmark)
        defer { try? store.close() }
        let email = expected.email
        let start = now()
        let cpu = processorSeconds()
        let results = try store.objects(Customer.self).filter(#Predicate { $0.email == email })
        let found = results.first?.fields
        let seconds = now() - start
        let cpuSeconds = processorSeconds() - cpu
        guard results.count == 1, found == expected.fields, results.plan.indexName == "Customer.email" else {
            throw failure("the first query does not find customer \(id): \(results.plan)")
        }
        return QueryCellResult(cell: cell.name, seconds: seconds, cpuSeconds: cpuSeconds, operations: 1, verified: 1, plan: results.plan.description)
    }

    /// Times an app's first screen on the store of `openObjects` customers: open, the 20 newest
    /// by `createdAt`, one customer by `email`; then checks both against the fixtures.
    private func firstScreen(evicted: Bool) throws -> QueryCellResult {
        let path = sharedStorePath(directory: directory, name: "customers", objects: sizes.openObjects, fileExtension: System.fileExtension)
        for file in System.files(for: path) where FileManager.default.fileExists(atPath: file) {
            if evicted { evictFromPageCache(file) } else { readThrough(file) }
        }
        let id = sizes.openObjects / 4 + 1
        let wanted = QueryFixtures.customer(id: id, seed: seed)
        let (system, newest, found, seconds, cpuSeconds) = try timedFirstScreen(path: path, email: wanted.email)
        let plan = try system.checkPlan(.equal, email: wanted.email, window: Date()..<Date(), city: "", bound: 0)
        try system.close()
        guard found.count == 1, found[0].fields == wanted.fields else { throw failure("customer \(id) is not found by its email") }
        let all = QueryFixtures.customers(1...sizes.openObjects, seed: seed)
        let expected = all.sorted { ($0.createdAt, -$0.id) > ($1.createdAt, -$1.id) }.prefix(20)
        guard newest.map(\.fields) == expected.map(\.fields) else { throw failure("the 20 newest are not the fixtures' 20 newest") }
        return QueryCellResult(cell: cell.name, seconds: seconds, cpuSeconds: cpuSeconds, operations: 1, verified: 21, plan: plan)
    }

    /// The timed part of `firstScreen`, alone in a function so that callgrind-query.sh counts it
    /// and nothing else (`--toggle-collect`).
    @inline(never)
    private func timedFirstScreen(path: String, email: String) throws
        -> (system: System, newest: [Customer], found: [Customer], seconds: Double, cpuSeconds: Double) {
        let start = now()
        let cpu = processorSeconds()
        let system = try System(path: path)
        let newest = try system.newestCreated(20)
        let found = try system.withEmail(email)
        return (system, newest, found, now() - start, processorSeconds() - cpu)
    }

    /// Drops a file's pages from the page cache (`POSIX_FADV_DONTNEED`; its pages are clean).
    private func evictFromPageCache(_ path: String) {
        let descriptor = Foundation.open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    }

    /// Reads a file to its end, so its pages are in the page cache.
    private func readThrough(_ path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        while let data = try? handle.read(upToCount: 1 << 20), !data.isEmpty {}
    }
}

/// A store of 1,000,000 customers opened, one customer read, timed together.
private struct OpenedStore {
    let store: Store
    let fields: CustomerFields?
    let seconds: Double
    let cpuSeconds: Double

    init(path: String, plain: Bool, id: Int) throws {
        let start = now()
        let cpu = processorSeconds()
        if plain {
            store = try Store(path: path, models: [PlainCustomer.self], configuration: .benchmark)
            fields = try store.object(PlainCustomer.self, primaryKey: id)?.fields
        } else {
            store = try Store(path: path, models: [Customer.self], configuration: .benchmark)
            fields = try store.object(Customer.self, primaryKey: id)?.fields
        }
        seconds = now() - start
        cpuSeconds = processorSeconds() - cpu
    }
}
