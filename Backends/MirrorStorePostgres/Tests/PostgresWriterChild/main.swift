// A child process of the multi-process test (MultiProcessTests.swift): one of several processes
// writing one PostgreSQL database at once, through a PostgresStore of its own.
//
//     PostgresWriterChild <process number> <transactions>
//
// The server comes from MIRRORSTORE_POSTGRES_HOST, _PORT, _USER and _DATABASE. Each transaction
// adds one ChildEntry under a key no other process uses, adds 1 to one of the eight shared
// ChildCounter rows (`update`, which locks the row), and every tenth also upserts one of five
// shared ChildShared rows. Prints `done <process> <transactions> <seconds>` and exits 0, or prints
// the error to standard error and exits 1.
import Foundation
import MirrorStore
import MirrorStorePostgres
import PostgresChildModels

/// A counter the test should have created before starting the children.
struct MissingCounter: Error, CustomStringConvertible {
    let id: Int
    var description: String { "ChildCounter \(id) is not stored; the test creates the counters before starting the children." }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let process = Int(arguments[1]), let transactions = Int(arguments[2]), transactions >= 0 else {
    FileHandle.standardError.write(Data("usage: PostgresWriterChild <process number> <transactions>\n".utf8))
    exit(2)
}
guard let settings = PostgresSettings.fromEnvironment() else {
    FileHandle.standardError.write(Data("PostgresWriterChild: set MIRRORSTORE_POSTGRES_HOST, _PORT, _USER and _DATABASE\n".utf8))
    exit(2)
}

do {
    let start = ContinuousClock.now
    let store = try await PostgresStore.open(settings, models: [ChildEntry.self, ChildCounter.self, ChildShared.self])
    for sequence in 0..<transactions {
        try await store.write { transaction in
            try await transaction.add(ChildEntry(id: process * 1_000_000 + sequence, process: process, sequence: sequence))
            let updated = try await transaction.update(ChildCounter.self, primaryKey: sequence % 8) {
                $0.count += 1
                $0.lastWriter = process
            }
            if updated == nil { throw MissingCounter(id: sequence % 8) }
            if sequence % 10 == 0 {
                try await transaction.add(ChildShared(id: (sequence / 10) % 5, writer: process, sequence: sequence))
            }
        }
    }
    await store.close()
    let elapsed = ContinuousClock.now - start
    print("done \(process) \(transactions) \(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)")
} catch {
    FileHandle.standardError.write(Data("PostgresWriterChild \(process): \(error)\n".utf8))
    exit(1)
}
