// A child process for the migration kill -9 tests. Mode:
//   migrate <store>   print "ready <pid>", open the store with version 2 of the models (migrating
//                     it), then print "migrated" and exit
//   observe <store>   read the store beside a writer, printing "seen <count>" for each Tick change
//                     observed (ReaderWorkload), until stdin closes
// Lines go straight to the stdout descriptor, so the parent sees them as soon as they are printed.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MirrorStore
import TestSupport

func run() async -> Int32 {
    let arguments = CommandLine.arguments
    if arguments.count == 3, arguments[1] == "observe" {
        return await ReaderWorkload.observe(path: arguments[2])
    }
    guard arguments.count == 3, arguments[1] == "migrate" else {
        say("usage: MigrationCrashChild migrate|observe <store>")
        return 2
    }
    say("ready \(getpid())")
    do {
        let store = try Store(
            path: arguments[2], models: [MigrationWorkload.ContactV2.self, MigrationWorkload.Note.self],
            configuration: MigrationWorkload.configuration(version: 2))
        try store.close()
        say("migrated")
        return 0
    } catch {
        say("error \(error)")
        return 1
    }
}

exit(await run())
