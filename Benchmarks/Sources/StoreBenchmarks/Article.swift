import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// A text-heavy shape: a title, a body of 200–500 bytes and a few tags.
final class Article: StoreShape {
    var id = 0
    var title = ""
    var body = ""
    var tags: [String] = []
    var publishedAt = Date(timeIntervalSince1970: 0)

    init() {}

    static var primaryKey: String? { "id" }
    static let databaseTableName = "article"
    static let shapeName = "text"
    static let shapeSummary = "Article: Int key, a 15–70 byte title, a 200–500 byte body, 1–5 tags, a Date"

    private static let words = [
        "store", "record", "index", "swift", "model", "value", "commit", "reader", "writer", "schema",
        "query", "file", "format", "block", "checksum", "version", "migration", "object", "key", "table",
        "the", "a", "of", "and", "to", "in", "is", "for", "with", "on", "every", "each", "one", "new",
    ]
    private static let tagNames = [
        "swift", "linux", "database", "performance", "storage", "design", "testing", "release",
        "tutorial", "news", "opinion", "benchmark",
    ]

    /// Words from the list, separated by spaces, until at least `length` bytes.
    private static func text(_ length: Int, _ random: inout SplitMix64) -> String {
        var text = ""
        while text.utf8.count < length {
            if !text.isEmpty { text += " " }
            text += words[random.next(in: 0...(words.count - 1))]
        }
        return text
    }

    static func fixture(id: Int, seed: UInt64) -> Article {
        var random = SplitMix64.object(id: id, seed: seed, salt: 2)
        let article = Article()
        article.id = id
        article.title = text(random.next(in: 15...60), &random)
        article.body = text(random.next(in: 200...490), &random)
        article.tags = (0 ..< random.next(in: 1...5)).map { _ in tagNames[random.next(in: 0...(tagNames.count - 1))] }
        article.publishedAt = Date(timeIntervalSince1970: Fixtures.firstDate + Double(random.next() % (8 * 86_400 * 365 * 8)) / 8)
        return article
    }

    static func key(id: Int, seed: UInt64) -> Int { id }

    var storedKey: Int { id }

    /// Tags are a JSON array, as GRDB encodes an array property of a Codable record.
    static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { table in
            table.primaryKey("id", .integer)
            table.column("title", .text).notNull()
            table.column("body", .text).notNull()
            table.column("tags", .jsonText).notNull()
            table.column("publishedAt", .datetime).notNull()
        }
    }

    func differences(from other: Article) -> [String] {
        var result = FieldComparison()
        result.compare("id", id, other.id)
        result.compare("title", title, other.title)
        result.compare("body", body, other.body)
        result.compare("tags", tags, other.tags)
        result.compare("publishedAt", publishedAt, other.publishedAt)
        return result.differences
    }
}
