import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore
import MirrorStoreEngine

/// A raw-value enum with no order: compared for equality only. Its cases are listed, so
/// `.rawValue` on it is known to read the stored value.
enum DiffMood: String, CaseIterable, Codable, Sendable {
    case calm, busy, away
}

/// An embedded model (no primary key): stored inside its parent's record.
struct DiffSpot: Persistable, Codable, Hashable, Sendable {
    var label = ""
    var level = 0
    init() {}

    init(label: String, level: Int) {
        self.label = label
        self.level = level
    }
}

/// A linked model with a primary key and an index of its own.
final class DiffOwner: Persistable, Equatable {
    var identifier = 0
    var name = ""
    var rank: Int?
    init() {}
    static var primaryKey: String? { "identifier" }
    static func == (lhs: DiffOwner, rhs: DiffOwner) -> Bool { lhs.identifier == rhs.identifier }
    static var indexedProperties: [String] { ["name"] }
}

/// Every value type a query reads, each scalar kind a query can index twice: `text` and
/// `indexedText` hold the same value, one read by a scan and one through an index.
final class DiffRecord: Persistable {
    var identifier = 0
    var text = ""
    var indexedText = ""
    var note: String?
    var indexedNote: String?
    var number = 0
    var indexedNumber = 0
    var small: Int8 = 0
    var big: UInt64 = 0
    var real = 0.0
    var ratio: Float = 0
    var flag = false
    var moment = Date(timeIntervalSinceReferenceDate: 0)
    var indexedMoment = Date(timeIntervalSinceReferenceDate: 0)
    var bytes = Data()
    var token = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var amount = Decimal()
    var optionalNumber: Int?
    /// Before every other container: the byte tests read only the first one.
    var words: Set<String> = []
    var numbers: [Int] = []
    var indexedWords: [String] = []
    var priority = AnswerPriority.low
    var indexedPriority = AnswerPriority.low
    var mood = DiffMood.calm
    var owner: DiffOwner?
    var friends: [DiffOwner] = []
    var spot = DiffSpot()
    var spots: [DiffSpot] = []
    var indexedReal = 0.0
    var indexedRatio: Float?
    var indexedToken = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var indexedBytes = Data()
    var counts: [String: Int] = [:]
    var site = URL(fileURLWithPath: "/")
    var indexedSite: URL?
    /// A key may hold `nil`, which is not an absent key.
    var optionalCounts: [String: Int?] = [:]
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] {
        ["indexedText", "indexedNote", "indexedNumber", "indexedMoment", "indexedWords", "indexedPriority",
         "indexedReal", "indexedRatio", "indexedToken", "indexedBytes", "indexedSite"]
    }
}

/// Values chosen to sit on the edges where stored bytes and Swift disagree most easily.
enum DiffValues {
    /// Composed and decomposed forms of the same text, emoji, the last scalar, empty text. No
    /// two of them are a pair the standard library leaves unordered (see `TextOrderTests`).
    static let texts = ["", "a", "A", "M", "Foo", "Zed", "zoo", "E", "E\u{301}lodie", "\u{C9}lodie", "e\u{301}", "\u{E9}",
                        "caf\u{E9}", "cafe\u{301}", "An", "An\u{10FFFF}x", "\u{10FFFF}", "\u{3A9}", "\u{2126}", "日本語",
                        "👩‍👩‍👧", "🇫🇷", " x", "a\u{0}b"]
    static let numbers = [Int.min, -42, -1, 0, 1, 7, 42, Int.max]
    static let smalls: [Int8] = [.min, -1, 0, 1, .max]
    static let bigs: [UInt64] = [0, 1, 1 << 63, .max]
    static let reals: [Double] = [-.infinity, -2.5, -0.0, 0.0, 1.5, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, .nan]
    /// Floats are sorted by, so no NaN: Swift's sort has no answer for it.
    static let ratios: [Float] = [-.infinity, -1, -0.0, 0, 0.5, .infinity]
    static let moments = [-86_400.0, 0, 1, 86_400 * 365].map(Date.init(timeIntervalSinceReferenceDate:))
    static let blobs = [Data(), Data([0]), Data([1, 2, 3])]
    static let tokens = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))]
    static let amounts = [Decimal(0), Decimal(-1), Decimal(string: "0.1") ?? 0, Decimal(1_000_000)]
    static let words = ["x", "y", "z", "\u{E9}", "e\u{301}", ""]
    static let priorities: [AnswerPriority] = [.low, .medium, .high, .urgent]
    static let moods: [DiffMood] = [.calm, .busy, .away]
    static let ownerNames = ["Ann", "Bob", "E\u{301}", "\u{C9}", ""]
    /// URLs equal only when their text is: case, escapes and a trailing slash differ.
    static let sites = ["https://example.com/a", "https://example.com/a/", "HTTPS://example.com/a", "https://example.com/%7e",
                        "https://example.com/~", "file:///tmp/x%20y", "a"].compactMap { URL(string: $0) }

    /// A set of `elements` built with a random capacity, so equal sets list their elements in
    /// different orders.
    static func set(_ elements: [String], _ random: inout SeededRandom) -> Set<String> {
        var set = Set<String>(minimumCapacity: random.pick([0, 8, 64, 300]))
        for element in elements { set.insert(element) }
        return set
    }

    static func words(_ random: inout SeededRandom) -> Set<String> {
        set((0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(words) }, &random)
    }

    static func numberList(_ random: inout SeededRandom) -> [Int] {
        (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(numbers) }
    }
}

/// The constants of one round of shapes.
struct DiffConstants {
    let text: String
    let otherText: String
    let number: Int
    let low: Int
    let high: Int
    let small: Int8
    let big: UInt64
    let real: Double
    let ratio: Float
    let moment: Date
    let later: Date
    let blob: Data
    let token: UUID
    let amount: Decimal
    let words: Set<String>
    let numbers: [Int]
    let word: String
    let priority: AnswerPriority
    let otherPriority: AnswerPriority
    let mood: DiffMood
    let ownerName: String
    let flag: Bool
    let count: Int
    let optionalNumber: Int?
    let optionalText: String?
    let otherWord: String
    let lowAmount: Decimal
    let highAmount: Decimal
    let spot: DiffSpot
    let site: URL
    /// A URL with the text of a stored one, but relative to a base: `==` to none of them.
    let basedSite: URL

    init(_ random: inout SeededRandom) {
        text = random.pick(DiffValues.texts)
        otherText = random.pick(DiffValues.texts)
        number = random.pick(DiffValues.numbers)
        let (a, b) = (random.pick(DiffValues.numbers), random.pick(DiffValues.numbers))
        (low, high) = (min(a, b), max(a, b))
        small = random.pick(DiffValues.smalls)
        big = random.pick(DiffValues.bigs)
        real = random.pick(DiffValues.reals)
        ratio = random.pick(DiffValues.ratios)
        let (m, n) = (random.pick(DiffValues.moments), random.pick(DiffValues.moments))
        (moment, later) = (min(m, n), max(m, n))
        blob = random.pick(DiffValues.blobs)
        token = random.pick(DiffValues.tokens)
        amount = random.pick(DiffValues.amounts)
        words = DiffValues.words(&random)
        numbers = DiffValues.numberList(&random)
        word = random.pick(DiffValues.words)
        let (p, q) = (random.pick(DiffValues.priorities), random.pick(DiffValues.priorities))
        (priority, otherPriority) = (min(p, q), max(p, q))
        mood = random.pick(DiffValues.moods)
        ownerName = random.pick(DiffValues.ownerNames)
        flag = random.chance(50)
        count = Int.random(in: 0...3, using: &random)
        optionalNumber = random.chance(30) ? nil : random.pick(DiffValues.numbers)
        optionalText = random.chance(30) ? nil : random.pick(DiffValues.texts)
        otherWord = random.pick(DiffValues.words)
        let (x, y) = (random.pick(DiffValues.amounts), random.pick(DiffValues.amounts))
        (lowAmount, highAmount) = (min(x, y), max(x, y))
        spot = DiffSpot(label: random.pick(DiffValues.texts), level: Int.random(in: 0...3, using: &random))
        site = random.pick(DiffValues.sites)
        basedSite = URL(filePath: "a", relativeTo: URL(string: "https://example.com/"))
    }
}

/// Many predicate shapes over every value type, links, embedded models and collections, with
/// edge values, answered by the store (scans and indexes; fresh, reopened, changed and in
/// memory; with sorts; as deletions inside a write block) and by `Array.filter` and
/// `sorted(using:)` on the same models: the same keys in the same order, or an error from both.
/// `MIRRORSTORE_SEED` replays another seed.
@Suite("Predicates against Array.filter, shape by shape")
struct PredicateDifferentialTests {
    static func shapes(_ k: DiffConstants) -> [(String, Predicate<DiffRecord>)] {
        let text = k.text, otherText = k.otherText, number = k.number, low = k.low, high = k.high
        let small = k.small, big = k.big, real = k.real, ratio = k.ratio, moment = k.moment, later = k.later
        let blob = k.blob, token = k.token, amount = k.amount, words = k.words, numbers = k.numbers, word = k.word
        let priority = k.priority, otherPriority = k.otherPriority, mood = k.mood, ownerName = k.ownerName
        let flag = k.flag, count = k.count, optionalNumber = k.optionalNumber, optionalText = k.optionalText
        let infinity = Double.infinity, zero = 0.0, otherWord = k.otherWord, lowAmount = k.lowAmount, highAmount = k.highAmount
        let spot = k.spot, noWords = Set<String>(), noBytes = Data(), largest = Int.max, smallest = Int.min, top = UInt64.max
        let composed = "\u{C9}lodie", decomposed = "E\u{301}lodie", calm = DiffMood.calm, floatInfinity = Float.infinity
        let span = low...high, openSpan = low..<high, textSpan = min(text, otherText)...max(text, otherText), momentSpan = moment..<later
        let prioritySpan = priority...otherPriority
        let site = k.site, basedSite = k.basedSite, moodRaw = k.mood.rawValue, priorityRaw = k.priority.rawValue
        let someNumber: Int? = number
        return [
            ("mood.rawValue == m", #Predicate { $0.mood.rawValue == moodRaw }),
            ("amount * 2 > a", #Predicate { $0.amount * 2 > amount }),
            ("amount - a == 0 || -amount < a", #Predicate { $0.amount - amount == 0 || -$0.amount < amount }),
            ("(amount + 0.1) * amount >= a", #Predicate { ($0.amount + lowAmount) * $0.amount >= highAmount }),
            ("optionalCounts[w] == n", #Predicate { $0.optionalCounts[word] == someNumber }),
            ("optionalCounts[w] == nil", #Predicate { $0.optionalCounts[word] == nil }),
            ("optionalCounts[w] == optional n", #Predicate { $0.optionalCounts[word] == optionalNumber }),
            ("optionalCounts[w, default: nil] == nil", #Predicate { $0.optionalCounts[word, default: nil] == nil }),
            ("optionalCounts[w, default: n] == n", #Predicate { $0.optionalCounts[word, default: optionalNumber] == optionalNumber }),
            ("mood.rawValue < t || flag", #Predicate { $0.mood.rawValue < text || $0.flag }),
            ("mood.rawValue starts with t", #Predicate { $0.mood.rawValue.starts(with: text) }),
            ("priority.rawValue == p", #Predicate { $0.priority.rawValue == priorityRaw }),
            ("priority.rawValue >= p", #Predicate { $0.priority.rawValue >= priorityRaw }),
            ("indexedPriority.rawValue != p && number > n", #Predicate { $0.indexedPriority.rawValue != priorityRaw && $0.number > number }),
            ("site == u", #Predicate { $0.site == site }),
            ("site != u", #Predicate { $0.site != site }),
            ("indexedSite == u", #Predicate { $0.indexedSite == site }),
            ("indexedSite == nil", #Predicate { $0.indexedSite == nil }),
            ("indexedSite != u && flag", #Predicate { $0.indexedSite != site && $0.flag }),
            ("site == based u", #Predicate { $0.site == basedSite }),
            ("indexedSite == based u", #Predicate { $0.indexedSite == basedSite }),
            ("owner === nil", #Predicate { $0.owner == nil }),
            ("owner !== nil", #Predicate { $0.owner != nil }),
            ("owner === nil && flag", #Predicate { $0.owner == nil && $0.flag }),
            ("flag || owner !== nil", #Predicate { $0.flag || $0.owner != nil }),
            ("!(owner === nil)", #Predicate { !($0.owner == nil) }),
            // Strings, scanned and indexed.
            ("text == t", #Predicate { $0.text == text }),
            ("text != t", #Predicate { $0.text != text }),
            ("text < t", #Predicate { $0.text < text }),
            ("text <= t", #Predicate { $0.text <= text }),
            ("text > t", #Predicate { $0.text > text }),
            ("text >= t", #Predicate { $0.text >= text }),
            ("t < text", #Predicate { text < $0.text }),
            ("!(text < t)", #Predicate { !($0.text < text) }),
            ("text in t...u", #Predicate { $0.text >= text && $0.text <= otherText }),
            ("text starts with t", #Predicate { $0.text.starts(with: text) }),
            ("text contains t", #Predicate { $0.text.contains(text) }),
            ("text is empty", #Predicate { $0.text.isEmpty }),
            ("text count > n", #Predicate { $0.text.count > count }),
            ("indexedText == t", #Predicate { $0.indexedText == text }),
            ("indexedText != t", #Predicate { $0.indexedText != text }),
            ("indexedText < t", #Predicate { $0.indexedText < text }),
            ("indexedText <= t", #Predicate { $0.indexedText <= text }),
            ("indexedText > t", #Predicate { $0.indexedText > text }),
            ("indexedText >= t", #Predicate { $0.indexedText >= text }),
            ("t >= indexedText", #Predicate { text >= $0.indexedText }),
            ("!(indexedText < t)", #Predicate { !($0.indexedText < text) }),
            ("indexedText > t && indexedText < u", #Predicate { $0.indexedText > text && $0.indexedText < otherText }),
            ("indexedText starts with t", #Predicate { $0.indexedText.starts(with: text) }),
            ("indexedText starts with t, number > n", #Predicate { $0.indexedText.starts(with: text) && $0.number > number }),
            ("indexedText == t || indexedText == u", #Predicate { $0.indexedText == text || $0.indexedText == otherText }),
            ("indexedText == text", #Predicate { $0.indexedText == $0.text }),
            ("note == t", #Predicate { $0.note == text }),
            ("note == nil", #Predicate { $0.note == nil }),
            ("note != nil", #Predicate { $0.note != nil }),
            ("note ?? u == t", #Predicate { ($0.note ?? otherText) == text }),
            ("note?.count > n", #Predicate { ($0.note?.count ?? 0) > count }),
            ("note == optional t", #Predicate { $0.note == optionalText }),
            ("indexedNote == t", #Predicate { $0.indexedNote == text }),
            ("indexedNote == nil", #Predicate { $0.indexedNote == nil }),
            ("indexedNote != optional t", #Predicate { $0.indexedNote != optionalText }),
            ("indexedNote ?? empty < t", #Predicate { ($0.indexedNote ?? "") < text }),
            ("indexedNote starts with t", #Predicate { $0.indexedNote?.starts(with: text) == true }),
            ("indexedNote flatMap > t", #Predicate { $0.indexedNote.flatMap { $0 > text } ?? false }),
            // Integers.
            ("number == n", #Predicate { $0.number == number }),
            ("number != n", #Predicate { $0.number != number }),
            ("number < n", #Predicate { $0.number < number }),
            ("number >= n", #Predicate { $0.number >= number }),
            ("n > number", #Predicate { number > $0.number }),
            ("number in low...high", #Predicate { (low...high).contains($0.number) }),
            ("number in low..<high", #Predicate { (low..<high).contains($0.number) }),
            ("number >= low && number < high", #Predicate { $0.number >= low && $0.number < high }),
            ("indexedNumber == n", #Predicate { $0.indexedNumber == number }),
            ("indexedNumber < n", #Predicate { $0.indexedNumber < number }),
            ("indexedNumber <= n", #Predicate { $0.indexedNumber <= number }),
            ("indexedNumber > n", #Predicate { $0.indexedNumber > number }),
            ("indexedNumber in low...high", #Predicate { (low...high).contains($0.indexedNumber) }),
            ("indexedNumber in low..<high", #Predicate { (low..<high).contains($0.indexedNumber) }),
            ("indexedNumber > low && indexedNumber <= high", #Predicate { $0.indexedNumber > low && $0.indexedNumber <= high }),
            ("!(indexedNumber == n)", #Predicate { !($0.indexedNumber == number) }),
            ("indexedNumber == n || number == n", #Predicate { $0.indexedNumber == number || $0.number == number }),
            ("indexedNumber == number", #Predicate { $0.indexedNumber == $0.number }),
            ("small < s", #Predicate { $0.small < small }),
            ("small == s", #Predicate { $0.small == small }),
            ("small >= s || flag", #Predicate { $0.small >= small || $0.flag }),
            ("big > b", #Predicate { $0.big > big }),
            ("big == b", #Predicate { $0.big == big }),
            ("big <= b && small != s", #Predicate { $0.big <= big && $0.small != small }),
            ("optionalNumber == n", #Predicate { $0.optionalNumber == number }),
            ("optionalNumber == optional n", #Predicate { $0.optionalNumber == optionalNumber }),
            ("optionalNumber == nil", #Predicate { $0.optionalNumber == nil }),
            ("optionalNumber ?? 0 > n", #Predicate { ($0.optionalNumber ?? 0) > number }),
            ("optionalNumber flatMap < n", #Predicate { $0.optionalNumber.flatMap { $0 < number } ?? false }),
            // Floating point, NaN and signed zeros included.
            ("real == r", #Predicate { $0.real == real }),
            ("real != r", #Predicate { $0.real != real }),
            ("real < r", #Predicate { $0.real < real }),
            ("real >= r", #Predicate { $0.real >= real }),
            ("!(real < r)", #Predicate { !($0.real < real) }),
            ("real in r...inf", #Predicate { $0.real >= real && $0.real <= infinity }),
            ("ratio == f", #Predicate { $0.ratio == ratio }),
            ("ratio > f", #Predicate { $0.ratio > ratio }),
            ("ratio <= f || real > r", #Predicate { $0.ratio <= ratio || $0.real > real }),
            // Booleans.
            ("flag", #Predicate { $0.flag }),
            ("!flag", #Predicate { !$0.flag }),
            ("flag == b", #Predicate { $0.flag == flag }),
            ("flag != b && number > n", #Predicate { $0.flag != flag && $0.number > number }),
            // Dates.
            ("moment == d", #Predicate { $0.moment == moment }),
            ("moment < d", #Predicate { $0.moment < moment }),
            ("moment in d...e", #Predicate { (moment...later).contains($0.moment) }),
            ("indexedMoment == d", #Predicate { $0.indexedMoment == moment }),
            ("indexedMoment > d", #Predicate { $0.indexedMoment > moment }),
            ("indexedMoment in d..<e", #Predicate { (moment..<later).contains($0.indexedMoment) }),
            ("indexedMoment <= d || flag", #Predicate { $0.indexedMoment <= moment || $0.flag }),
            // Data, UUID, Decimal.
            ("bytes == x", #Predicate { $0.bytes == blob }),
            ("bytes != x", #Predicate { $0.bytes != blob }),
            ("bytes count > n", #Predicate { $0.bytes.count > count }),
            ("bytes is empty", #Predicate { $0.bytes.isEmpty }),
            ("token == u", #Predicate { $0.token == token }),
            ("token != u", #Predicate { $0.token != token }),
            ("amount == a", #Predicate { $0.amount == amount }),
            ("amount < a", #Predicate { $0.amount < amount }),
            ("amount >= a && flag", #Predicate { $0.amount >= amount && $0.flag }),
            // Enums: raw-value equality, and an order of their own.
            ("mood == m", #Predicate { $0.mood == mood }),
            ("mood != m", #Predicate { $0.mood != mood }),
            ("priority == p", #Predicate { $0.priority == priority }),
            ("priority < p", #Predicate { $0.priority < priority }),
            ("priority >= p", #Predicate { $0.priority >= priority }),
            ("priority in p...q", #Predicate { (priority...otherPriority).contains($0.priority) }),
            ("indexedPriority == p", #Predicate { $0.indexedPriority == priority }),
            ("indexedPriority > p", #Predicate { $0.indexedPriority > priority }),
            ("indexedPriority <= p && indexedNumber > n", #Predicate { $0.indexedPriority <= priority && $0.indexedNumber > number }),
            ("indexedPriority in p..<q", #Predicate { (priority..<otherPriority).contains($0.indexedPriority) }),
            // Arrays and sets.
            ("numbers == xs", #Predicate { $0.numbers == numbers }),
            ("numbers != xs", #Predicate { $0.numbers != numbers }),
            ("numbers contains n", #Predicate { $0.numbers.contains(number) }),
            ("numbers contains where > n", #Predicate { $0.numbers.contains { $0 > number } }),
            ("numbers all < n", #Predicate { $0.numbers.allSatisfy { $0 < number } }),
            ("numbers is empty", #Predicate { $0.numbers.isEmpty }),
            ("numbers count == n", #Predicate { $0.numbers.count == count }),
            ("numbers first == n", #Predicate { $0.numbers.first == number }),
            ("words == s", #Predicate { $0.words == words }),
            ("words != s", #Predicate { $0.words != words }),
            ("words contains w", #Predicate { $0.words.contains(word) }),
            ("words contains where starts with w", #Predicate { $0.words.contains { $0.starts(with: word) } }),
            ("words count > n", #Predicate { $0.words.count > count }),
            ("words is empty || flag", #Predicate { $0.words.isEmpty || $0.flag }),
            ("indexedWords contains w", #Predicate { $0.indexedWords.contains(word) }),
            ("indexedWords contains w && number > n", #Predicate { $0.indexedWords.contains(word) && $0.number > number }),
            ("indexedWords contains where == w", #Predicate { $0.indexedWords.contains { $0 == word } }),
            ("indexedWords all != w", #Predicate { $0.indexedWords.allSatisfy { $0 != word } }),
            // Embedded models.
            ("spot.level > n", #Predicate { $0.spot.level > count }),
            ("spot.label == t", #Predicate { $0.spot.label == text }),
            ("spot.label < t || spot.level == n", #Predicate { $0.spot.label < text || $0.spot.level == count }),
            ("spots contains where label == t", #Predicate { $0.spots.contains { $0.label == text } }),
            ("spots all level <= n", #Predicate { $0.spots.allSatisfy { $0.level <= count } }),
            ("spots count > n", #Predicate { $0.spots.count > count }),
            // Links.
            ("owner == nil", #Predicate { $0.owner?.identifier == nil }),
            ("owner != nil", #Predicate { $0.owner?.identifier != nil }),
            ("owner?.name == o", #Predicate { $0.owner?.name == ownerName }),
            ("owner?.name != o", #Predicate { $0.owner?.name != ownerName }),
            ("owner?.name < o", #Predicate { ($0.owner?.name ?? "") < ownerName }),
            ("owner?.rank == nil", #Predicate { $0.owner?.rank == nil }),
            ("owner?.rank > n", #Predicate { ($0.owner?.rank ?? 0) > count }),
            ("owner?.name starts with o", #Predicate { $0.owner?.name.starts(with: ownerName) == true }),
            ("owner?.name == o && flag", #Predicate { $0.owner?.name == ownerName && $0.flag }),
            ("friends contains where name == o", #Predicate { $0.friends.contains { $0.name == ownerName } }),
            ("friends all rank != nil", #Predicate { $0.friends.allSatisfy { $0.rank != nil } }),
            ("friends count >= n", #Predicate { $0.friends.count >= count }),
            ("friends is empty || owner == nil", #Predicate { $0.friends.isEmpty || $0.owner?.identifier == nil }),
            // Mixed logic and conditionals.
            ("number > n ? flag : !flag", #Predicate { $0.number > number ? $0.flag : !$0.flag }),
            ("(text == t || number < n) && !flag", #Predicate { ($0.text == text || $0.number < number) && !$0.flag }),
            ("!(indexedText == t && indexedNumber > n)", #Predicate { !($0.indexedText == text && $0.indexedNumber > number) }),
            ("identifier > n && indexedText >= t", #Predicate { $0.identifier > count && $0.indexedText >= text }),
            ("identifier == n", #Predicate { $0.identifier == count }),
            ("true", #Predicate { _ in true }),
            ("false", #Predicate { _ in false }),
            // Parts that throw in Swift (an empty array's subscript, a force unwrap of nil),
            // before and after parts that decide.
            ("numbers[0] == n || flag", #Predicate { $0.numbers[0] == number || $0.flag }),
            ("flag || numbers[0] == n", #Predicate { $0.flag || $0.numbers[0] == number }),
            ("numbers.isEmpty || numbers[0] > n", #Predicate { $0.numbers.isEmpty || $0.numbers[0] > number }),
            ("numbers[0] > n && indexedNumber == n", #Predicate { $0.numbers[0] > number && $0.indexedNumber == number }),
            ("indexedNumber == n && numbers[0] > n", #Predicate { $0.indexedNumber == number && $0.numbers[0] > number }),
            ("note! == t || flag", #Predicate { $0.note! == text || $0.flag }),
            ("note != nil && note! < t", #Predicate { $0.note != nil && $0.note! < text }),
            ("owner!.name == o", #Predicate { $0.owner!.name == ownerName }),
            // More strings: literals in both forms, members against members, negations.
            ("text == u", #Predicate { $0.text == otherText }),
            ("text > t && text < u", #Predicate { $0.text > text && $0.text < otherText }),
            ("text starts with t || indexedText starts with u", #Predicate { $0.text.starts(with: text) || $0.indexedText.starts(with: otherText) }),
            ("!(text starts with t)", #Predicate { !$0.text.starts(with: text) }),
            ("text contains t && flag", #Predicate { $0.text.contains(text) && $0.flag }),
            ("text == empty literal", #Predicate { $0.text == "" }),
            ("text != empty literal", #Predicate { $0.text != "" }),
            ("text >= M literal", #Predicate { $0.text >= "M" }),
            ("indexedText < M literal", #Predicate { $0.indexedText < "M" }),
            ("indexedText == composed", #Predicate { $0.indexedText == composed }),
            ("indexedText == decomposed", #Predicate { $0.indexedText == decomposed }),
            ("text == decomposed", #Predicate { $0.text == decomposed }),
            ("indexedText starts with decomposed E", #Predicate { $0.indexedText.starts(with: "E\u{301}") }),
            ("text starts with composed E", #Predicate { $0.text.starts(with: "\u{C9}") }),
            ("indexedText > Foo literal", #Predicate { $0.indexedText > "Foo" }),
            ("M > indexedText", #Predicate { "M" > $0.indexedText }),
            ("text count == n", #Predicate { $0.text.count == count }),
            ("text is empty == b", #Predicate { $0.text.isEmpty == flag }),
            ("indexedText is empty", #Predicate { $0.indexedText.isEmpty }),
            ("indexedText != text", #Predicate { $0.indexedText != $0.text }),
            ("indexedNote == u", #Predicate { $0.indexedNote == otherText }),
            ("indexedNote != nil", #Predicate { $0.indexedNote != nil }),
            ("(indexedNote ?? text) == u", #Predicate { ($0.indexedNote ?? $0.text) == otherText }),
            ("note == indexedNote", #Predicate { $0.note == $0.indexedNote }),
            ("indexedText in t..<u", #Predicate { (text..<otherText).contains($0.indexedText) }),
            ("text in t..<u", #Predicate { (text..<otherText).contains($0.text) }),
            ("spot.label starts with t", #Predicate { $0.spot.label.starts(with: text) }),
            ("spots contains where label starts with t", #Predicate { $0.spots.contains { $0.label.starts(with: text) } }),
            ("spot.label is empty", #Predicate { $0.spot.label.isEmpty }),
            ("owner?.name == Ann literal", #Predicate { $0.owner?.name == "Ann" }),
            ("friends contains where name starts with o", #Predicate { $0.friends.contains { $0.name.starts(with: ownerName) } }),
            ("friends contains where rank == n", #Predicate { $0.friends.contains { $0.rank == count } }),
            ("friends all name != o", #Predicate { $0.friends.allSatisfy { $0.name != ownerName } }),
            ("owner?.name is empty", #Predicate { $0.owner?.name.isEmpty == true }),
            ("(owner?.rank ?? -1) == n", #Predicate { ($0.owner?.rank ?? -1) == count }),
            ("owner?.rank == optional n", #Predicate { $0.owner?.rank == optionalNumber }),
            // More integers, extremes included.
            ("number == low || number == high", #Predicate { $0.number == low || $0.number == high }),
            ("number != low && number != high", #Predicate { $0.number != low && $0.number != high }),
            ("number > low && number < high", #Predicate { $0.number > low && $0.number < high }),
            ("!(number >= n)", #Predicate { !($0.number >= number) }),
            ("number in low...high && flag", #Predicate { (low...high).contains($0.number) && $0.flag }),
            ("indexedNumber in low...high && indexedText == t", #Predicate { $0.indexedNumber >= low && $0.indexedNumber <= high && $0.indexedText == text }),
            ("indexedNumber == Int.max", #Predicate { $0.indexedNumber == largest }),
            ("indexedNumber > Int.min", #Predicate { $0.indexedNumber > smallest }),
            ("number < Int.max", #Predicate { $0.number < largest }),
            ("indexedNumber < low || indexedNumber > high", #Predicate { $0.indexedNumber < low || $0.indexedNumber > high }),
            ("indexedNumber != n", #Predicate { $0.indexedNumber != number }),
            ("indexedNumber >= n", #Predicate { $0.indexedNumber >= number }),
            ("small <= s && small >= -1", #Predicate { $0.small <= small && $0.small >= -1 }),
            ("big != b", #Predicate { $0.big != big }),
            ("big >= b || small < s", #Predicate { $0.big >= big || $0.small < small }),
            ("small == 0 literal", #Predicate { $0.small == 0 }),
            ("big == UInt64.max", #Predicate { $0.big == top }),
            ("optionalNumber != nil && optionalNumber! > n", #Predicate { $0.optionalNumber != nil && $0.optionalNumber! > number }),
            ("optionalNumber != n", #Predicate { $0.optionalNumber != number }),
            // More floating point.
            ("real <= r", #Predicate { $0.real <= real }),
            ("real > r", #Predicate { $0.real > real }),
            ("real == 0", #Predicate { $0.real == zero }),
            ("real != real (NaN)", #Predicate { $0.real != $0.real }),
            ("real == real", #Predicate { $0.real == $0.real }),
            ("real < r || real > r", #Predicate { $0.real < real || $0.real > real }),
            ("ratio < f", #Predicate { $0.ratio < ratio }),
            ("ratio >= f && ratio <= f", #Predicate { $0.ratio >= ratio && $0.ratio <= ratio }),
            ("ratio != f", #Predicate { $0.ratio != ratio }),
            // More dates.
            ("moment > d", #Predicate { $0.moment > moment }),
            ("moment <= d", #Predicate { $0.moment <= moment }),
            ("moment != d", #Predicate { $0.moment != moment }),
            ("indexedMoment < d", #Predicate { $0.indexedMoment < moment }),
            ("indexedMoment >= d && indexedMoment <= e", #Predicate { $0.indexedMoment >= moment && $0.indexedMoment <= later }),
            ("moment == indexedMoment", #Predicate { $0.moment == $0.indexedMoment }),
            ("indexedMoment != d", #Predicate { $0.indexedMoment != moment }),
            // More data, UUIDs, decimals.
            ("bytes == empty", #Predicate { $0.bytes == noBytes }),
            ("bytes count == n", #Predicate { $0.bytes.count == count }),
            ("token == u || bytes is empty", #Predicate { $0.token == token || $0.bytes.isEmpty }),
            ("amount > a", #Predicate { $0.amount > amount }),
            ("amount <= a", #Predicate { $0.amount <= amount }),
            ("amount != a", #Predicate { $0.amount != amount }),
            ("amount in a...b", #Predicate { (lowAmount...highAmount).contains($0.amount) }),
            // More enums.
            ("mood == calm", #Predicate { $0.mood == calm }),
            ("priority != p", #Predicate { $0.priority != priority }),
            ("priority > p && priority < q", #Predicate { $0.priority > priority && $0.priority < otherPriority }),
            ("indexedPriority >= p", #Predicate { $0.indexedPriority >= priority }),
            ("indexedPriority < p || mood == m", #Predicate { $0.indexedPriority < priority || $0.mood == mood }),
            ("indexedPriority != p", #Predicate { $0.indexedPriority != priority }),
            ("priority == indexedPriority", #Predicate { $0.priority == $0.indexedPriority }),
            ("priority < indexedPriority", #Predicate { $0.priority < $0.indexedPriority }),
            // More collections.
            ("numbers contains n || numbers is empty", #Predicate { $0.numbers.contains(number) || $0.numbers.isEmpty }),
            ("!numbers contains n", #Predicate { !$0.numbers.contains(number) }),
            ("numbers count > n && contains where < 0", #Predicate { $0.numbers.count > count && $0.numbers.contains { $0 < 0 } }),
            ("numbers all != n", #Predicate { $0.numbers.allSatisfy { $0 != number } }),
            ("numbers contains where == low || == high", #Predicate { $0.numbers.contains { $0 == low || $0 == high } }),
            ("words contains w && count == 1", #Predicate { $0.words.contains(word) && $0.words.count == 1 }),
            ("!words contains w", #Predicate { !$0.words.contains(word) }),
            ("words all count < 2", #Predicate { $0.words.allSatisfy { $0.count < 2 } }),
            ("words == empty set", #Predicate { $0.words == noWords }),
            ("words != s && count <= n", #Predicate { $0.words != words && $0.words.count <= count }),
            ("!words contains w || words == s", #Predicate { !$0.words.contains(word) || $0.words == words }),
            ("words contains w || words contains v", #Predicate { $0.words.contains(word) || $0.words.contains(otherWord) }),
            ("indexedWords is empty", #Predicate { $0.indexedWords.isEmpty }),
            ("indexedWords count == n", #Predicate { $0.indexedWords.count == count }),
            ("indexedWords == [w]", #Predicate { $0.indexedWords == [word] }),
            ("indexedWords contains w || contains v", #Predicate { $0.indexedWords.contains(word) || $0.indexedWords.contains(otherWord) }),
            ("!indexedWords contains w", #Predicate { !$0.indexedWords.contains(word) }),
            ("indexedWords first == w", #Predicate { $0.indexedWords.first == word }),
            ("indexedWords contains w && words contains v", #Predicate { $0.indexedWords.contains(word) && $0.words.contains(otherWord) }),
            // More embedded models.
            ("spot.level == n", #Predicate { $0.spot.level == count }),
            ("spot.level < n && spot.label != t", #Predicate { $0.spot.level < count && $0.spot.label != text }),
            ("spots is empty", #Predicate { $0.spots.isEmpty }),
            ("spots contains where level > n", #Predicate { $0.spots.contains { $0.level > count } }),
            ("spots all label is empty", #Predicate { $0.spots.allSatisfy { $0.label.isEmpty } }),
            ("spots count == n", #Predicate { $0.spots.count == count }),
            ("spot == s", #Predicate { $0.spot == spot }),
            ("spots == [s]", #Predicate { $0.spots == [spot] }),
            ("spots contains s", #Predicate { $0.spots.contains(spot) }),
            // More links.
            ("owner?.identifier == n", #Predicate { $0.owner?.identifier == count }),
            ("(owner?.identifier ?? 0) > n", #Predicate { ($0.owner?.identifier ?? 0) > count }),
            ("friends contains where identifier == n", #Predicate { $0.friends.contains { $0.identifier == count } }),
            ("friends count == 0", #Predicate { $0.friends.count == 0 }),
            ("owner?.name == o || friends contains where name == o", #Predicate { $0.owner?.name == ownerName || $0.friends.contains { $0.name == ownerName } }),
            ("friends all (rank ?? 0) < n", #Predicate { $0.friends.allSatisfy { ($0.rank ?? 0) < count } }),
            // More logic.
            ("flag ? number > n : text < t", #Predicate { $0.flag ? $0.number > number : $0.text < text }),
            ("text is empty ? true : text starts with t", #Predicate { $0.text.isEmpty ? true : $0.text.starts(with: text) }),
            ("!(flag || indexedNumber > n)", #Predicate { !($0.flag || $0.indexedNumber > number) }),
            ("flag == (number > n)", #Predicate { $0.flag == ($0.number > number) }),
            ("(a || b) && (c || d)", #Predicate { ($0.flag || $0.number > number) && ($0.text < text || $0.real > real) }),
            // More parts that throw.
            ("numbers[1] == n", #Predicate { $0.numbers[1] == number }),
            ("numbers.first! > n", #Predicate { $0.numbers.first! > number }),
            ("optionalNumber! == n && flag", #Predicate { $0.optionalNumber! == number && $0.flag }),
            ("flag && optionalNumber! == n", #Predicate { $0.flag && $0.optionalNumber! == number }),
            ("owner!.rank == nil", #Predicate { $0.owner!.rank == nil }),
            ("spots[0].level > n", #Predicate { $0.spots[0].level > count }),
            ("indexedWords[0] == w || flag", #Predicate { $0.indexedWords[0] == word || $0.flag }),
            ("numbers count > 1 && numbers[1] > n", #Predicate { $0.numbers.count > 1 && $0.numbers[1] > number }),
            ("indexedText == t && optionalNumber! > n", #Predicate { $0.indexedText == text && $0.optionalNumber! > number }),
            ("optionalNumber! > n && indexedText == t", #Predicate { $0.optionalNumber! > number && $0.indexedText == text }),
            ("indexedText <= empty", #Predicate { $0.indexedText <= "" }),
            ("indexedText < empty", #Predicate { $0.indexedText < "" }),
            ("indexedText > empty", #Predicate { $0.indexedText > "" }),
            ("text <= empty", #Predicate { $0.text <= "" }),
            ("indexedNote == empty", #Predicate { $0.indexedNote == "" }),
            ("real >= -infinity", #Predicate { $0.real >= -infinity }),
            ("number <= n || small > s", #Predicate { $0.number <= number || $0.small > small }),
            ("indexedMoment == e", #Predicate { $0.indexedMoment == later }),
            ("words != empty set", #Predicate { $0.words != noWords }),
            ("spots != [s]", #Predicate { $0.spots != [spot] }),
            ("owner?.rank != nil", #Predicate { $0.owner?.rank != nil }),
            ("friends contains where rank == nil", #Predicate { $0.friends.contains { $0.rank == nil } }),
            // Negative literals: the macro writes a minus applied to the literal or capture.
            ("number < -50", #Predicate { $0.number < -50 }),
            ("indexedNumber < -42", #Predicate { $0.indexedNumber < -42 }),
            ("indexedNumber >= -1 && indexedNumber <= 1", #Predicate { $0.indexedNumber >= -1 && $0.indexedNumber <= 1 }),
            ("indexedNumber in -42...-1", #Predicate { (-42 ... -1).contains($0.indexedNumber) }),
            ("small > -1 || small == -127", #Predicate { $0.small > -1 || $0.small == -127 }),
            ("real == -0.0", #Predicate { $0.real == -0.0 }),
            ("real < -2.5 || real > -0.0", #Predicate { $0.real < -2.5 || $0.real > -0.0 }),
            ("ratio <= -0.0", #Predicate { $0.ratio <= -0.0 }),
            ("real > -r", #Predicate { $0.real > -real }),
            ("ratio == -f", #Predicate { $0.ratio == -ratio }),
            ("(optionalNumber ?? -1) > 3", #Predicate { ($0.optionalNumber ?? -1) > 3 }),
            ("indexedNote == nil || number > -7", #Predicate { $0.indexedNote == nil || $0.number > -7 }),
            ("-real >= r", #Predicate { -$0.real >= real }),
            ("-ratio < f", #Predicate { -$0.ratio < ratio }),
            // Arithmetic that cannot trap: floating point (infinities, NaN, signed zeros) and
            // integer operations no stored value overflows.
            ("real * 2 > r", #Predicate { $0.real * 2 > real }),
            ("real - real == 0 (inf - inf is NaN)", #Predicate { $0.real - $0.real == 0 }),
            ("real / r < 1", #Predicate { $0.real / real < 1 }),
            ("real + 0.1 + 0.2 == real + 0.3", #Predicate { $0.real + 0.1 + 0.2 == $0.real + 0.3 }),
            ("real * r - r != real", #Predicate { $0.real * real - real != $0.real }),
            ("ratio * f > 1", #Predicate { $0.ratio * ratio > 1 }),
            ("ratio / 0 == -inf", #Predicate { $0.ratio / 0 == -floatInfinity }),
            ("ratio + f == f + ratio", #Predicate { $0.ratio + ratio == ratio + $0.ratio }),
            ("(real + real) / 2 <= real", #Predicate { ($0.real + $0.real) / 2 <= $0.real }),
            ("number / 2 > n", #Predicate { $0.number / 2 > number }),
            ("number % 2 == 1 || number % 2 == -1", #Predicate { $0.number % 2 == 1 || $0.number % 2 == -1 }),
            ("indexedNumber / 7 == n / 7", #Predicate { $0.indexedNumber / 7 == number / 7 }),
            ("small / 2 == s / 2", #Predicate { $0.small / 2 == small / 2 }),
            ("big / 2 >= b / 2", #Predicate { $0.big / 2 >= big / 2 }),
            ("big % 3 == 0", #Predicate { $0.big % 3 == 0 }),
            ("spot.level * 2 > n", #Predicate { $0.spot.level * 2 > count }),
            ("spots contains where level - 1 == n", #Predicate { $0.spots.contains { $0.level - 1 == count } }),
            ("(owner?.rank ?? 0) + 1 > n", #Predicate { ($0.owner?.rank ?? 0) + 1 > count }),
            ("owner?.rank * 2 == n", #Predicate { $0.owner.flatMap { $0.rank.flatMap { $0 * 2 } } == count }),
            ("friends contains where identifier - n < 0", #Predicate { $0.friends.contains { $0.identifier - count < 0 } }),
            ("number != Int.max && number + 1 > n", #Predicate { $0.number != largest && $0.number + 1 > number }),
            ("number > Int.min && -number < n", #Predicate { $0.number > smallest && -$0.number < number }),
            ("big > 0 && big - 1 >= b", #Predicate { $0.big > 0 && $0.big - 1 >= big }),
            ("small in -64..<64 && small * 2 > s", #Predicate { $0.small >= -64 && $0.small < 64 && $0.small * 2 > small }),
            ("amount * 2 > a (Decimal, on models)", #Predicate { $0.amount * 2 > amount }),
            // Equality read from indexes of doubles, floats, UUIDs and data.
            ("indexedReal == r", #Predicate { $0.indexedReal == real }),
            ("indexedReal == -0.0", #Predicate { $0.indexedReal == -0.0 }),
            ("indexedReal == 0 || indexedReal == inf", #Predicate { $0.indexedReal == zero || $0.indexedReal == infinity }),
            ("indexedReal == r && flag", #Predicate { $0.indexedReal == real && $0.flag }),
            ("indexedReal != r", #Predicate { $0.indexedReal != real }),
            ("indexedReal < r", #Predicate { $0.indexedReal < real }),
            ("indexedRatio == f", #Predicate { $0.indexedRatio == ratio }),
            ("indexedRatio == nil", #Predicate { $0.indexedRatio == nil }),
            ("indexedRatio == f || indexedRatio == nil", #Predicate { $0.indexedRatio == ratio || $0.indexedRatio == nil }),
            ("indexedToken == u", #Predicate { $0.indexedToken == token }),
            ("indexedBytes == x", #Predicate { $0.indexedBytes == blob }),
            ("indexedBytes == empty && indexedToken != u", #Predicate { $0.indexedBytes == noBytes && $0.indexedToken != token }),
            // Filters, positions and extremes of arrays; lookups in dictionaries.
            ("numbers filter > n count == c", #Predicate { $0.numbers.filter { $0 > number }.count == count }),
            ("numbers filter < 0 is empty", #Predicate { $0.numbers.filter { $0 < 0 }.isEmpty }),
            ("friends filter rank == nil count > 0", #Predicate { $0.friends.filter { $0.rank == nil }.count > 0 }),
            ("spots filter level > n is empty || flag", #Predicate { $0.spots.filter { $0.level > count }.isEmpty || $0.flag }),
            ("indexedWords filter == w count >= 1", #Predicate { $0.indexedWords.filter { $0 == word }.count >= 1 }),
            ("numbers max == n", #Predicate { $0.numbers.max() == number }),
            ("numbers min ?? 0 < n", #Predicate { ($0.numbers.min() ?? 0) < number }),
            ("numbers max == nil", #Predicate { $0.numbers.max() == nil }),
            ("indexedWords max == w", #Predicate { $0.indexedWords.max() == word }),
            ("indexedWords min ?? t >= t", #Predicate { ($0.indexedWords.min() ?? text) >= text }),
            ("numbers count > 0 && numbers[0] == n", #Predicate { $0.numbers.count > 0 && $0.numbers[0] == number }),
            ("numbers count > 2 && numbers[2] > n || flag", #Predicate { ($0.numbers.count > 2 && $0.numbers[2] > number) || $0.flag }),
            ("spots count > 1 && spots[1].level == n", #Predicate { $0.spots.count > 1 && $0.spots[1].level == count }),
            ("friends count > 0 && friends[0].name == o", #Predicate { $0.friends.count > 0 && $0.friends[0].name == ownerName }),
            ("counts[w] == n", #Predicate { $0.counts[word] == number }),
            ("counts[w] == nil", #Predicate { $0.counts[word] == nil }),
            ("counts[w, default: 0] > n", #Predicate { $0.counts[word, default: 0] > number }),
            ("counts[w] ?? n < 0 || counts is empty", #Predicate { ($0.counts[word] ?? number) < 0 || $0.counts.isEmpty }),
            // Ranges captured whole.
            ("captured low...high contains number", #Predicate { span.contains($0.number) }),
            ("captured low..<high contains indexedNumber", #Predicate { openSpan.contains($0.indexedNumber) }),
            ("captured t...t contains indexedText", #Predicate { textSpan.contains($0.indexedText) }),
            ("captured d..<e contains moment", #Predicate { momentSpan.contains($0.moment) }),
            ("captured p...q contains priority (an order of its own)", #Predicate { prioritySpan.contains($0.priority) }),
        ]
    }

    /// Shapes on which Swift traps for some objects (an overflow, a division by zero), each with
    /// when it does, in Swift's order of evaluation: the store must throw where `Array.filter`
    /// would stop the program, and answer as it does otherwise.
    static func trappingShapes(_ k: DiffConstants) -> [(String, Predicate<DiffRecord>, (DiffRecord) -> Bool)] {
        let number = k.number, count = k.count, small = k.small, big = k.big, low = k.low, text = k.text
        func adds(_ a: Int, _ b: Int) -> Bool { a.addingReportingOverflow(b).overflow }
        return [
            ("number + c > n", #Predicate { $0.number + count > number }, { adds($0.number, count) }),
            ("number - c < n", #Predicate { $0.number - count < number }, { $0.number.subtractingReportingOverflow(count).overflow }),
            ("number * c == n", #Predicate { $0.number * count == number }, { $0.number.multipliedReportingOverflow(by: count).overflow }),
            ("number / c > n", #Predicate { $0.number / count > number }, { _ in count == 0 }),
            ("number % c == 0", #Predicate { $0.number % count == 0 }, { _ in count == 0 }),
            ("-number > n", #Predicate { -$0.number > number }, { $0.number == .min }),
            ("indexedNumber == -n", #Predicate { $0.indexedNumber == -number }, { _ in number == .min }),
            ("number > -low || flag", #Predicate { $0.number > -low || $0.flag }, { _ in low == .min }),
            ("small * 2 > s", #Predicate { $0.small * 2 > small }, { $0.small.multipliedReportingOverflow(by: 2).overflow }),
            ("small - s < 0", #Predicate { $0.small - small < 0 }, { $0.small.subtractingReportingOverflow(small).overflow }),
            ("small % -1 == 0", #Predicate { $0.small % -1 == 0 }, { $0.small == .min }),
            ("big - b > 0", #Predicate { $0.big - big > 0 }, { $0.big < big }),
            ("big + b >= b", #Predicate { $0.big + big >= big }, { $0.big.addingReportingOverflow(big).overflow }),
            ("flag && number + c > n", #Predicate { $0.flag && $0.number + count > number }, { $0.flag && adds($0.number, count) }),
            ("text == t || number + c == n", #Predicate { $0.text == text || $0.number + count == number },
             { $0.text != text && adds($0.number, count) }),
            ("(optionalNumber ?? 0) + c > n", #Predicate { ($0.optionalNumber ?? 0) + count > number },
             { adds($0.optionalNumber ?? 0, count) }),
            ("numbers contains where + c > n", #Predicate { $0.numbers.contains { $0 + count > number } }, { record in
                for element in record.numbers {
                    if adds(element, count) { return true }
                    if element + count > number { return false }
                }
                return false
            }),
            ("indexedNumber == n && number * c > n", #Predicate { $0.indexedNumber == number && $0.number * count > number },
             { $0.indexedNumber == number && $0.number.multipliedReportingOverflow(by: count).overflow }),
            ("number * c > n && indexedNumber == n", #Predicate { $0.number * count > number && $0.indexedNumber == number },
             { $0.number.multipliedReportingOverflow(by: count).overflow }),
        ]
    }

    /// Every shape, with when Swift traps on it (nil: never).
    static func allShapes(_ k: DiffConstants) -> [(String, Predicate<DiffRecord>, ((DiffRecord) -> Bool)?)] {
        shapes(k).map { ($0.0, $0.1, nil) } + trappingShapes(k).map { ($0.0, $0.1, $0.2) }
    }

    /// What `Array.filter` gives on `records`, sorted by `sort`, or nil where it throws or would trap.
    static func expected(
        _ records: [DiffRecord], _ predicate: Predicate<DiffRecord>, traps: ((DiffRecord) -> Bool)?, sort: [SortDescriptor<DiffRecord>]
    ) -> [Int]? {
        if let traps, records.contains(where: traps) { return nil }
        return outcome { try records.filter { try predicate.evaluate($0) }.sorted(using: sort).map(\.identifier) }
    }

    static func sorts() -> [[SortDescriptor<DiffRecord>]] { [
        [], [SortDescriptor(\.text)], [SortDescriptor(\.indexedText, order: .reverse)], [SortDescriptor(\.indexedText)],
        [SortDescriptor(\.number), SortDescriptor(\.text)], [SortDescriptor(\.indexedNumber)], [SortDescriptor(\.small, order: .reverse)],
        [SortDescriptor(\.big)], [SortDescriptor(\.ratio)], [SortDescriptor(\.moment, order: .reverse)], [SortDescriptor(\.note)],
        [SortDescriptor(\.priority)], [SortDescriptor(\.indexedPriority, order: .reverse), SortDescriptor(\.identifier)],
        [SortDescriptor(\.amount)], [SortDescriptor(\.indexedMoment)],
        [SortDescriptor(\.token)], [SortDescriptor(\.indexedToken, order: .reverse), SortDescriptor(\.text)],
        [SortDescriptor(\.spot.label)], [SortDescriptor(\.spot.level, order: .reverse), SortDescriptor(\.owner?.name)],
        [SortDescriptor(\.owner?.name, order: .reverse)], [SortDescriptor(\.owner?.rank), SortDescriptor(\.token, order: .reverse)],
    ] }

    static func records(_ random: inout SeededRandom) -> (records: [DiffRecord], owners: [DiffOwner]) {
        let owners = (1...6).map { identifier in
            let owner = DiffOwner()
            owner.identifier = identifier
            owner.name = random.pick(DiffValues.ownerNames)
            owner.rank = random.chance(30) ? nil : Int.random(in: 0...3, using: &random)
            return owner
        }
        let records = (1...140).map { record($0, owners: owners, &random) }
        return (records, owners)
    }

    static func record(_ identifier: Int, owners: [DiffOwner], _ random: inout SeededRandom) -> DiffRecord {
        let record = DiffRecord()
        record.identifier = identifier
        record.text = random.pick(DiffValues.texts)
        record.indexedText = record.text
        record.note = random.chance(30) ? nil : random.pick(DiffValues.texts)
        record.indexedNote = record.note
        record.number = random.pick(DiffValues.numbers)
        record.indexedNumber = record.number
        record.small = random.pick(DiffValues.smalls)
        record.big = random.pick(DiffValues.bigs)
        record.real = random.pick(DiffValues.reals)
        record.ratio = random.pick(DiffValues.ratios)
        record.flag = random.chance(50)
        record.moment = random.pick(DiffValues.moments)
        record.indexedMoment = record.moment
        record.bytes = random.pick(DiffValues.blobs)
        record.token = random.pick(DiffValues.tokens)
        record.amount = random.pick(DiffValues.amounts)
        record.optionalNumber = random.chance(30) ? nil : random.pick(DiffValues.numbers)
        record.numbers = DiffValues.numberList(&random)
        record.words = DiffValues.words(&random)
        record.indexedWords = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(DiffValues.words) }
        record.priority = random.pick(DiffValues.priorities)
        record.indexedPriority = record.priority
        record.mood = random.pick(DiffValues.moods)
        record.owner = random.chance(20) ? nil : random.pick(owners)
        record.friends = (0..<Int.random(in: 0...2, using: &random)).map { _ in random.pick(owners) }
        record.spot = DiffSpot(label: random.pick(DiffValues.texts), level: Int.random(in: 0...3, using: &random))
        record.spots = (0..<Int.random(in: 0...2, using: &random)).map { _ in
            DiffSpot(label: random.pick(DiffValues.texts), level: Int.random(in: 0...3, using: &random))
        }
        record.indexedReal = record.real
        record.indexedRatio = random.chance(30) ? nil : record.ratio
        record.indexedToken = record.token
        record.indexedBytes = record.bytes
        for _ in 0..<Int.random(in: 0...3, using: &random) { record.counts[random.pick(DiffValues.words)] = random.pick(DiffValues.numbers) }
        record.site = random.pick(DiffValues.sites)
        record.indexedSite = random.chance(30) ? nil : random.pick(DiffValues.sites)
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            record.optionalCounts[random.pick(DiffValues.words)] = .some(random.chance(30) ? nil : random.pick(DiffValues.numbers))
        }
        return record
    }

    /// The keys `body` gives, or the fact that it threw.
    static func outcome(_ body: () throws -> [Int]) -> [Int]? {
        try? body()
    }

    static func integers(_ keys: [StorageKey]) -> [Int] {
        keys.map { key in if case .integer(let value) = key { Int(value) } else { -1 } }
    }

    /// Every shape with one round's constants, each with a random sort, on `store`.
    static func check(_ store: Store, _ records: [DiffRecord], random: inout SeededRandom, phase: String) throws -> Int {
        let k = DiffConstants(&random)
        let shapes = Self.allShapes(k)
        for (label, predicate, traps) in shapes {
            let sort = random.pick(Self.sorts())
            let sortFirst = random.chance(50)
            let expected = expected(records, predicate, traps: traps, sort: sort)
            let found = outcome {
                let all = try store.objects(DiffRecord.self)
                let results = sortFirst ? try all.sorted(using: sort).filter(predicate) : try all.filter(predicate).sorted(using: sort)
                return try integers(results.storageKeys)
            }
            #expect(found == expected, "\(phase): \(label) (t: \(k.text.debugDescription), u: \(k.otherText.debugDescription)), \(sort.count) sort keys, sorted \(sortFirst ? "first" : "last") (nil: threw)")
        }
        return shapes.count
    }

    private struct RollBack: Error {}

    /// Every shape as a `delete(_:where:)` inside a write block, on top of changes the block
    /// made first: it removes exactly the objects `Array.filter` selects from the changed
    /// models, or throws where that throws. Each block is rolled back.
    static func checkDeletes(_ store: Store, _ records: [DiffRecord], owners: [DiffOwner], random: inout SeededRandom, phase: String) throws {
        let changes = (0..<12).map { _ in record(random.pick(records).identifier, owners: owners, &random) }
        var changed = records
        for change in changes {
            if let position = changed.firstIndex(where: { $0.identifier == change.identifier }) { changed[position] = change }
        }
        let k = DiffConstants(&random)
        for (label, predicate, traps) in allShapes(k) {
            let expected = expected(changed, predicate, traps: traps, sort: [])
            var found: [Int]?
            do {
                try store.write { transaction in
                    try transaction.add(contentsOf: changes)
                    let count = try transaction.delete(DiffRecord.self, where: predicate)
                    // The count, and each object that should be gone is: nothing else went.
                    found = try (expected ?? []).filter { try transaction.object(DiffRecord.self, primaryKey: $0) == nil }
                    if found?.count != count { found = [count] }
                    throw RollBack()
                }
            } catch is RollBack {
            } catch {
                found = nil
            }
            #expect(found == expected, "\(phase): delete where \(label) (t: \(k.text.debugDescription)) (nil: threw)")
        }
    }

    @Test("every shape answers as Array.filter does: fresh, reopened, changed, in memory, and deleting in a write block (seeded)")
    func shapesMatchArrays() throws {
        let seed = SeededRandom.seed(default: 0xD1FF)
        var random = SeededRandom(seed: seed)
        let (initial, owners) = Self.records(&random)
        var records = initial
        try withTemporaryDirectory { directory in
            let path = directory + "/differential.store"
            var configuration = Store.Configuration()
            configuration.durability = .none
            var store = try Store(path: path, models: [DiffRecord.self], configuration: configuration)
            try store.write { try $0.add(contentsOf: records) }
            let count = try Self.check(store, records, random: &random, phase: "seed \(seed), fresh")
            #expect(count >= 300)
            try store.close()

            store = try Store(path: path, models: [DiffRecord.self], configuration: configuration)
            _ = try Self.check(store, records, random: &random, phase: "seed \(seed), reopened")

            // Changed values (index keys move), deletions, new objects; then compacted.
            try store.write { transaction in
                for _ in 0..<40 {
                    let position = Int.random(in: 0..<records.count, using: &random)
                    if random.chance(30) {
                        try transaction.delete(DiffRecord.self, primaryKey: records[position].identifier)
                        records.remove(at: position)
                    } else {
                        let replacement = Self.record(records[position].identifier, owners: owners, &random)
                        try transaction.add(replacement)
                        records[position] = replacement
                    }
                }
            }
            // A deleted owner: links to it stay stored and read as nil on the models.
            let gone = random.pick(owners).identifier
            try store.write { try $0.delete(DiffOwner.self, primaryKey: gone) }
            for record in records {
                if record.owner?.identifier == gone { record.owner = nil }
                record.friends.removeAll { $0.identifier == gone }
            }
            try store.compact()
            _ = try Self.check(store, records, random: &random, phase: "seed \(seed), changed and compacted")
            try store.close()
        }
        // A store whose log is not a mapped file.
        let memory = try Store.inMemory(models: [DiffRecord.self])
        try memory.write { try $0.add(contentsOf: records) }
        _ = try Self.check(memory, records, random: &random, phase: "seed \(seed), in memory")
        try Self.checkDeletes(memory, records, owners: owners, random: &random, phase: "seed \(seed), in a write block")
    }
}
