import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Random operations on a file store, mirrored on a dictionary: after every step the store holds
/// exactly what the dictionary says. Replay a failure with `MIRRORSTORE_SEED=<seed>`.
@Suite("Store model-based")
struct StoreModelBasedTests {
    /// `streamingThreshold` nil keeps today's default; a small one streams most transactions'
    /// records to the log as they are added, which must change nothing the store shows.
    @Test("1,500 random operations with reopen and compaction match a dictionary", arguments: [nil, 1, 300])
    func randomOperations(streamingThreshold: Int?) throws {
        let seed = SeededRandom.seed(default: 0x5EED_0004)
        var random = SeededRandom(seed: seed)
        try withTemporaryDirectory { directory in
            let path = directory + "/model.store"
            var configuration = Store.Configuration()
            if let streamingThreshold { configuration.transactionStreamingThreshold = streamingThreshold }
            configuration.durability = .none
            configuration.compaction = .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 32 << 10)
            var store = try Store(path: path, models: [Article.self], configuration: configuration)
            var expected: [String: Article] = [:]
            for step in 0..<1_500 {
                let slug = "a\(Int.random(in: 0..<60, using: &random))"
                let context = "seed \(seed), step \(step)"
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<45:
                    var article = Article()
                    article.slug = slug
                    article.title = random.string()
                    article.tags = (0..<Int.random(in: 0...3, using: &random)).map { Tag("t\($0)", weight: Int(random.integer(Int8.self))) }
                    try store.write { try $0.add(article) }
                    expected[slug] = article
                case 45..<65:
                    let title = random.string()
                    let updated = try store.write { try $0.update(Article.self, primaryKey: slug, set: \.title, to: title) }
                    #expect((updated != nil) == (expected[slug] != nil), "\(context)")
                    expected[slug]?.title = title
                case 65..<85:
                    try store.write { try $0.delete(Article.self, primaryKey: slug) }
                    expected[slug] = nil
                case 85..<87:
                    try store.write { try $0.deleteAll(Article.self) }
                    expected = [:]
                case 87..<94:
                    try store.compact()
                default:
                    try store.close()
                    store = try Store(path: path, models: [Article.self], configuration: configuration)
                }
                if step % 25 == 0 || step == 1_499 {
                    let stored = try store.objects(Article.self).all()
                    let matches = stored.map(\.slug) == expected.keys.sorted()
                        && stored.allSatisfy { article in
                            guard let model = expected[article.slug] else { return false }
                            return model.title == article.title && model.tags == article.tags
                        }
                    #expect(matches, "\(context)")
                    if !matches { return }
                }
            }
            try store.close()
        }
    }
}
