import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A store with checkpoints recorded commit by commit, for the tests that damage it: its bytes,
/// and after each commit the state and where the commit's own unit ends (index units after it
/// belong to no commit, which is why `RecordedStore`'s file size after each unit does not serve).
struct RecordedCommits {
    private(set) var bytes: [UInt8] = []
    private(set) var commitEnds = [Int(LogHeader().unitsStart)]
    private(set) var states: [StoreState]

    /// Starts from the state of `engine`, which has committed nothing yet.
    init(startingFrom engine: StorageEngine) throws {
        states = [try StoreState(engine.snapshot())]
    }

    /// Commits `batch` to `engine`, whose file is `path`, noting where its unit ends and the
    /// state it leaves.
    mutating func commit(_ batch: WriteBatch, to engine: StorageEngine, at path: String) throws {
        let before = Int(engine.statistics.fileSize)
        try engine.commit(batch)
        let frame = try readFile(path)[before..<(before + 4)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        commitEnds.append(before + LogFrame.headerSize + frame)
        states.append(try StoreState(engine.snapshot()))
    }

    /// Keeps the bytes of the file at `path`, once its engine is closed.
    mutating func finish(readingFrom path: String) throws {
        bytes = try readFile(path)
    }

    /// The state of the commits that end at or before `length`.
    func state(upTo length: Int) -> (index: Int, state: StoreState) {
        let index = commitEnds.lastIndex(where: { $0 <= length }) ?? 0
        return (index, states[index])
    }

    /// Writes `damaged`, these bytes with a bit flipped at `at`, to `path` and opens it in both
    /// recovery modes: each opening must give a typed error, or a state some commit made, the
    /// last one or one that ends before the flip. Counts each outcome in `outcomes` ("typed
    /// error", "whole state", "prefix").
    func expectCommittedStateOrTypedError(
        opening damaged: [UInt8], flippedAt at: Int, as path: String,
        configuration: (EngineConfiguration.RecoveryMode) -> EngineConfiguration,
        _ context: String, outcomes: inout [String: Int]
    ) throws {
        for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
            try replaceStore(at: path, with: damaged)
            let state: StoreState
            do {
                state = try openState(path, configuration(mode))
            } catch is StorageError {
                outcomes["typed error", default: 0] += 1
                continue
            }
            let last = states.count - 1
            guard let index = states.lastIndex(of: state) else {
                Issue.record("\(context), flip at \(at), \(mode): a state no commit made: \(state)")
                continue
            }
            // A prefix ends before the damage; the whole state is right when the flip hit bytes
            // nothing reads (a superseded run or checkpoint, the header's spare bytes).
            #expect(index == last || commitEnds[index] <= at, "\(context), flip at \(at), \(mode): commit \(index) applied")
            outcomes[index == last ? "whole state" : "prefix", default: 0] += 1
        }
    }
}
