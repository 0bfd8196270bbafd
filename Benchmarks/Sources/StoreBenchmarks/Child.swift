import BenchmarkSupport
import Foundation

// The child side: one process per cell and repetition, so each peak resident set belongs to one
// cell of one system. A child verifies, times one section, checks what it got and reports.

/// Runs one cell with `System` in this process.
struct CellRunner<System: BenchmarkedSystem> {
    let cell: Cell
    let sizes: Sizes
    let directory: String

    /// A store of this child's own in the scratch directory.
    private func scratchPath(_ label: String) -> String {
        "\(directory)/\(label)-\(getpid()).\(System.fileExtension)"
    }

    private var seed: UInt64 { sizes.seed }

    func run() throws -> CellResult {
        switch cell.workload {
        case .insert: try insert()
        case .insertShuffled: try insert(shuffled: true)
        case .fetchAll: try fetchAll()
        case .lookup: try lookup()
        case .commit: try commit()
        case .concurrent: try concurrent()
        case .open: try open(cold: false)
        case .openCold: try open(cold: true)
        }
    }

    private func result(_ seconds: Double, _ operations: Int, _ memory: MemoryWindow, verified: Int) -> CellResult {
        CellResult(
            cell: cell.name, seconds: seconds, operations: operations,
            residentBefore: memory.residentBefore, peakResident: memory.peakResident, verified: verified)
    }

    /// Exercises the write path on a throwaway store first, so the timed section does not pay
    /// for first-use costs (MirrorStore's reflection plan, GRDB's statement compilation).
    private func warmUpWrites(transactions: Int, objectsEach: Int) throws {
        let path = scratchPath("warm-up")
        defer { System.removeFiles(for: path) }
        let system = try System.create(path: path)
        let objects = Fixtures.objects(System.Model.self, 1...(transactions * objectsEach), seed: seed)
        if objectsEach == 1 {
            for object in objects { try system.insertOne(object) }
        } else {
            try system.insert(objects)
        }
        try system.close()
    }

    /// Reopens a store this child wrote, checks it and removes it; returns its size.
    private func verifyWritten(_ path: String, objects: Int) throws -> (bytes: Int, verified: Int) {
        defer { System.removeFiles(for: path) }
        let bytes = System.fileBytes(for: path)
        let system = try System(path: path)
        let sample = Fixtures.sample(200, of: objects, seed: seed)
        try system.verify(objects: objects, sample: sample, seed: seed, label: cell.name)
        try system.close()
        return (bytes, sample.count)
    }

    private func insert(shuffled: Bool = false) throws -> CellResult {
        var objects = Fixtures.objects(System.Model.self, 1...sizes.objects, seed: seed)
        if shuffled {
            var random = SplitMix64(seed: seed)
            objects.shuffle(using: &random)
        }
        try warmUpWrites(transactions: 1, objectsEach: min(1_000, sizes.objects))
        let path = scratchPath("insert")
        let system = try System.create(path: path)
        let (_, seconds, memory) = try timedSection { try system.insert(objects) }
        try system.close()
        let (bytes, verified) = try verifyWritten(path, objects: sizes.objects)
        var result = result(seconds, sizes.objects, memory, verified: verified)
        result.fileBytes = bytes
        return result
    }

    /// Opens the shared store of `objects` and checks a sample of it (which also warms the read path).
    private func openShared() throws -> (System, verified: Int) {
        let path = preparedPath(directory: directory, shape: System.Model.shapeName, objects: sizes.objects, fileExtension: System.fileExtension)
        let system = try System(path: path)
        let sample = Fixtures.sample(200, of: sizes.objects, seed: seed)
        try system.verify(objects: sizes.objects, sample: sample, seed: seed, label: cell.name)
        return (system, sample.count)
    }

    private func fetchAll() throws -> CellResult {
        let (system, verified) = try openShared()
        let (all, seconds, memory) = try timedSection { try system.fetchAll() }
        guard all.count == sizes.objects else {
            throw BenchmarkFailure("\(cell.name): fetched \(all.count) objects, expected \(sizes.objects)")
        }
        let byKey = Dictionary(all.map { ($0.storedKey, $0) }, uniquingKeysWith: { first, _ in first })
        for id in Fixtures.sample(200, of: sizes.objects, seed: seed &+ 1) {
            let expected = System.Model.fixture(id: id, seed: seed)
            guard let object = byKey[expected.storedKey] else {
                throw BenchmarkFailure("\(cell.name): object \(id) was not fetched")
            }
            let differences = object.differences(from: expected)
            guard differences.isEmpty else {
                throw BenchmarkFailure("\(cell.name): fetched object \(id) is wrong: \(differences.joined(separator: ", "))")
            }
        }
        blackHole(all)
        try system.close()
        return result(seconds, sizes.objects, memory, verified: verified + 200)
    }

    private func lookup() throws -> CellResult {
        let order = Fixtures.lookupOrder(objects: sizes.objects, seed: seed).map { System.Model.key(id: $0, seed: seed) }
        let (system, verified) = try openShared()
        let (found, seconds, memory) = try timedSection {
            if cell.implementation == .grdbReadEach, let grdb = system as? GRDBSystem<System.Model> {
                try grdb.lookUpEachInOwnRead(order)
            } else {
                try system.lookUp(order)
            }
        }
        guard found == sizes.objects else {
            throw BenchmarkFailure("\(cell.name): found \(found) of \(sizes.objects) objects")
        }
        try system.close()
        return result(seconds, sizes.objects, memory, verified: verified)
    }

    private func commit() throws -> CellResult {
        let objects = Fixtures.objects(System.Model.self, 1...sizes.commits, seed: seed)
        try warmUpWrites(transactions: 10, objectsEach: 1)
        let path = scratchPath("commit")
        let system = try System.create(path: path)
        let (_, seconds, memory) = try timedSection {
            for object in objects { try system.insertOne(object) }
        }
        try system.close()
        let (bytes, verified) = try verifyWritten(path, objects: sizes.commits)
        var result = result(seconds, sizes.commits, memory, verified: verified)
        result.fileBytes = bytes
        return result
    }

    private func concurrent() throws -> CellResult {
        try warmUpWrites(transactions: 10, objectsEach: 1)
        let path = scratchPath("concurrent")
        let system = try System.create(path: path)
        let total = sizes.threads * sizes.commitsPerThread
        let (_, seconds, memory) = try timedSection {
            try commitConcurrently(system, threads: sizes.threads, commitsEach: sizes.commitsPerThread, seed: seed)
        }
        try system.close()
        let (bytes, verified) = try verifyWritten(path, objects: total)
        var result = result(seconds, total, memory, verified: verified)
        result.fileBytes = bytes
        return result
    }

    /// Opens the shared large store and reads one object. Reports the allocator's and the
    /// kernel's view of the memory the open store holds.
    private func open(cold: Bool) throws -> CellResult {
        let path = preparedPath(directory: directory, shape: System.Model.shapeName, objects: sizes.openObjects, fileExtension: System.fileExtension)
        for file in System.files(for: path) {
            if cold { Memory.evictFromPageCache(file) } else { Memory.readThrough(file) }
        }
        let id = sizes.openObjects / 2 + 1
        let key = System.Model.key(id: id, seed: seed)
        let allocatedBefore = Memory.allocatedBytes()
        let ((system, object), seconds, memory) = try timedSection {
            let system = try System(path: path)
            return (system, try system.object(key: key))
        }
        let allocatedGrowth = Memory.allocatedBytes() - allocatedBefore
        let residentGrowth = Memory.resident().current - memory.residentBefore
        guard let object else { throw BenchmarkFailure("\(cell.name): no object \(id)") }
        let differences = object.differences(from: System.Model.fixture(id: id, seed: seed))
        guard differences.isEmpty else {
            throw BenchmarkFailure("\(cell.name): object \(id) is wrong: \(differences.joined(separator: ", "))")
        }
        guard try system.count() == sizes.openObjects else {
            throw BenchmarkFailure("\(cell.name): the store does not hold \(sizes.openObjects) objects")
        }
        try system.close()
        var result = result(seconds, 1, memory, verified: 1)
        result.allocatedGrowth = allocatedGrowth
        result.residentGrowth = residentGrowth
        return result
    }
}

/// Errors thrown on the committing threads, for the thread that waits for them.
private final class ThreadErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []

    func add(_ error: any Error) {
        lock.withLock { errors.append("\(error)") }
    }

    var first: String? { lock.withLock { errors.first } }
}

/// `threads` threads each commit `commitsEach` objects, one per durable transaction. The
/// threads build their objects first and start committing together; the timed span ends when
/// the last one is done.
func commitConcurrently<System: BenchmarkedSystem>(_ system: System, threads: Int, commitsEach: Int, seed: UInt64) throws {
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let errors = ThreadErrors()
    for thread in 0..<threads {
        done.enter()
        let worker = Thread {
            let first = thread * commitsEach + 1
            let objects = Fixtures.objects(System.Model.self, first..<(first + commitsEach), seed: seed)
            ready.signal()
            start.wait()
            do {
                for object in objects { try system.insertOne(object) }
            } catch {
                errors.add(error)
            }
            done.leave()
        }
        worker.start()
    }
    for _ in 0..<threads { ready.wait() }
    for _ in 0..<threads { start.signal() }
    done.wait()
    if let error = errors.first { throw BenchmarkFailure("a committing thread failed: \(error)") }
}

/// Builds the stores the read workloads share, in the parent's scratch directory, and verifies
/// them: `objects` objects in one transaction (fetch-all, lookup) and `openObjects` in
/// transactions of 100,000 (open).
func prepare<System: BenchmarkedSystem>(_: System.Type, sizes: Sizes, directory: String, small: Bool, large: Bool) throws -> PrepareResult {
    var result = PrepareResult(implementation: System.name, note: "", verified: 0)
    let notePath = "\(directory)/note-\(getpid()).\(System.fileExtension)"
    let noted = try System.create(path: notePath)
    result.note = noted.note
    try noted.close()
    System.removeFiles(for: notePath)

    func build(objects: Int, batch: Int) throws -> (bytes: Int, seconds: Double) {
        let path = preparedPath(directory: directory, shape: System.Model.shapeName, objects: objects, fileExtension: System.fileExtension)
        System.removeFiles(for: path)
        let clock = ContinuousClock()
        let start = clock.now
        let system = try System.create(path: path)
        for first in stride(from: 1, through: objects, by: batch) {
            try system.insert(Fixtures.objects(System.Model.self, first...min(objects, first + batch - 1), seed: sizes.seed))
        }
        try system.close()
        let elapsed = start.duration(to: clock.now).components
        let reopened = try System(path: path)
        let sample = Fixtures.sample(1_000, of: objects, seed: sizes.seed)
        try reopened.verify(objects: objects, sample: sample, seed: sizes.seed, label: "prepare \(objects)")
        try reopened.close()
        result.verified += sample.count
        return (System.fileBytes(for: path), Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }
    if small {
        (result.smallBytes, result.smallSeconds) = try build(objects: sizes.objects, batch: sizes.objects)
    }
    if large {
        (result.largeBytes, result.largeSeconds) = try build(objects: sizes.openObjects, batch: 100_000)
    }
    return result
}
