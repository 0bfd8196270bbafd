import BenchmarkSupport
import Foundation

/// The two models measured.
enum Workload: String, CaseIterable {
    case flat
    case nested
}

/// What one timed batch does to each object.
enum Direction: String, CaseIterable {
    case toStored = "model → record"
    case toModel = "record → model"
    case roundTrip = "round trip"
}

/// One cell of the result table: a batch over prebuilt arrays of distinct objects.
struct Cell {
    let workload: Workload
    let implementation: Implementation
    let direction: Direction
    let objects: Int
    let batch: () throws -> Void

    var name: String { "\(workload.rawValue)/\(implementation.rawValue)/\(direction.rawValue)" }
}

/// The three cells of one implementation: each object converted one way, the other way, and both.
/// Every result goes to `blackHole`, then is released, so deallocation is part of the cost, as it
/// is in an application.
func makeCells<M: Mapping>(_ mapping: M, _ workload: Workload, models: [M.Model], stored: [M.Stored]) -> [Cell] {
    [
        Cell(workload: workload, implementation: mapping.implementation, direction: .toStored, objects: models.count) {
            for model in models { blackHole(try mapping.stored(from: model)) }
        },
        Cell(workload: workload, implementation: mapping.implementation, direction: .toModel, objects: stored.count) {
            for record in stored { blackHole(try mapping.model(from: record)) }
        },
        Cell(workload: workload, implementation: mapping.implementation, direction: .roundTrip, objects: models.count) {
            for model in models { blackHole(try mapping.model(from: mapping.stored(from: model))) }
        },
    ]
}

/// Nanoseconds `body` takes, on the monotonic clock.
func nanoseconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    let elapsed = start.duration(to: clock.now).components
    return Double(elapsed.seconds) * 1e9 + Double(elapsed.attoseconds) / 1e9
}

/// The CPU time this thread has used, in nanoseconds: unlike the monotonic clock it does not count
/// the time the scheduler gives to other processes, so it cross-checks runs on a busy machine.
func threadCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// One timed batch, per object: on the monotonic clock (the figure reported) and in thread CPU time.
struct Sample {
    let wall: Double
    let cpu: Double
}

/// Runs every cell `warmup` times, then `runs` times round-robin (so slow drifts of the machine
/// touch every cell alike), and returns each cell's samples, one per run.
func measure(_ cells: [Cell], runs: Int, warmup: Int, progress: (Int) -> Void) throws -> [[Sample]] {
    for _ in 0..<warmup {
        for cell in cells { try cell.batch() }
    }
    var samples = Array(repeating: [Sample](), count: cells.count)
    for run in 0..<runs {
        for (index, cell) in cells.enumerated() {
            let cpuStart = threadCPUNanoseconds()
            let wall = try nanoseconds(cell.batch)
            let cpu = threadCPUNanoseconds() - cpuStart
            let objects = Double(cell.objects)
            samples[index].append(Sample(wall: wall / objects, cpu: cpu / objects))
        }
        progress(run + 1)
    }
    return samples
}

// MARK: Formatting

func formatNanoseconds(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
}

func formatRatio(_ value: Double) -> String {
    String(format: value >= 10 ? "%.1f×" : "%.2f×", value)
}

