import Foundation

/// The name and e-mail of a benchmark customer, drawn from a customer's own generator, so both
/// benchmark programs build the same people from the same seed.
public struct CustomerName {
    public let name: String
    public let email: String

    public init(id: Int, random: inout SplitMix64) {
        let first = Self.firstNames[Int(random.next() % UInt64(Self.firstNames.count))]
        let last = Self.lastNames[Int(random.next() % UInt64(Self.lastNames.count))]
        name = "\(first) \(last)"
        email = "\(first.lowercased()).\(last.lowercased().replacingOccurrences(of: " ", with: ""))\(id)@example.com"
    }

    static let firstNames = [
        "Ada", "Alan", "Barbara", "Bjarne", "Brian", "Charles", "Claude", "Dennis", "Donald", "Edsger",
        "Frances", "Grace", "Guido", "Hedy", "John", "Joan", "Ken", "Leslie", "Linus", "Margaret",
        "Niklaus", "Radia", "Richard", "Robin", "Shafi", "Sophie", "Tim", "Tony", "Vint", "Whitfield",
        "Yukihiro", "Christopher",
    ]
    static let lastNames = [
        "Lovelace", "Turing", "Liskov", "Stroustrup", "Kernighan", "Babbage", "Shannon", "Ritchie",
        "Knuth", "Dijkstra", "Allen", "Hopper", "van Rossum", "Lamarr", "McCarthy", "Clarke", "Thompson",
        "Lamport", "Torvalds", "Hamilton", "Wirth", "Perlman", "Stallman", "Milner", "Goldwasser",
        "Wilson", "Berners-Lee", "Hoare", "Cerf", "Diffie", "Matsumoto", "Strachey",
    ]
}
