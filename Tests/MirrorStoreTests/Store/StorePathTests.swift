import Foundation
import MirrorStore
import Testing
import TestSupport

/// File-system errors a new user meets first: they name the store, say what to do, and leave
/// nothing behind.
@Suite struct StorePathTests {
    final class Note: Persistable {
        var id = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    @Test("an empty path is refused before anything is made: no stray lock file")
    func emptyPath() throws {
        let workingDirectory = FileManager.default.currentDirectoryPath
        let before = try FileManager.default.contentsOfDirectory(atPath: workingDirectory)
        #expect {
            try Store(path: "", models: [Note.self])
        } throws: { error in
            (error as? StorageError)?.kind == .emptyPath
                && "\(error)" == "The store path is empty; give the store a file name, such as 'app.store'."
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: workingDirectory)) == Set(before))
    }

    @Test("a store in a folder that does not exist: the error names the store and says what to do")
    func missingFolder() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("no/such/folder/notes.store")
        #expect {
            try Store(path: path, models: [Note.self])
        } throws: { error in
            "\(error)" == "Could not create the lock file of the store '\(path)': No such file or directory (errno 2); check the path: the file or its folder does not exist."
        }
    }
}
