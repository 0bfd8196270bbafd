import Foundation
import Testing
@_spi(Testing) import MirrorStore

final class IndexedLink: Persistable {
    var identifier = 0
    var site = URL(fileURLWithPath: "/")
    var mirror: URL?
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["site", "mirror"] }
}

/// Equality on an indexed URL reads the index, as exactly as Swift's `==` answers: stored URLs
/// have no base, and a constant with one is left to the models.
@Suite("URL index equality")
struct URLIndexTests {
    static let sites = ["https://example.com/a", "https://example.com/a/", "HTTPS://example.com/a", "https://example.com/%7e",
                        "https://example.com/~", "https://example.com/caf%C3%A9", "file:///tmp/x%20y", "b"].compactMap { URL(string: $0) }

    @Test("`==` on an indexed URL reads the index; a constant with a base URL is decided on the models")
    func urlEquality() throws {
        let links = (1...80).map { identifier in
            let link = IndexedLink()
            link.identifier = identifier
            link.site = Self.sites[identifier % Self.sites.count]
            link.mirror = identifier % 3 == 0 ? nil : Self.sites[(identifier * 7) % Self.sites.count]
            return link
        }
        let store = try Store.inMemory(models: [IndexedLink.self])
        try store.write { try $0.add(contentsOf: links) }
        func check(_ predicate: Predicate<IndexedLink>, index: String?, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let results = try store.objects(IndexedLink.self).filter(predicate)
            let expected = try links.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
            #expect(results.plan.indexName == index, "plan: \(results.plan)", sourceLocation: sourceLocation)
            if index != nil { #expect(results.plan.filter == .none, "plan: \(results.plan)", sourceLocation: sourceLocation) }
        }
        for site in Self.sites {
            try check(#Predicate { $0.site == site }, index: "IndexedLink.site")
            try check(#Predicate { $0.mirror == site }, index: "IndexedLink.mirror")
        }
        let unset: URL? = nil
        try check(#Predicate { $0.mirror == unset }, index: "IndexedLink.mirror")
        // The same text as a stored URL, relative to a base: Swift's `==` says no.
        let based = try #require(URL(string: "a", relativeTo: URL(string: "https://example.com/")))
        #expect(based.absoluteString == "https://example.com/a")
        try check(#Predicate { $0.site == based }, index: nil)
        try check(#Predicate { $0.site != based }, index: nil)
        #expect(try store.objects(IndexedLink.self).filter(#Predicate { $0.site == based }).isEmpty)
    }
}
