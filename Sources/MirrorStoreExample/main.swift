import Foundation
import MirrorStore

// Runs MirrorStore end to end: map a model to a record and back, then create a store, write,
// reopen and query it. Usage: MirrorStoreExample [store path] (default: ./heroes.store).

let marvel = Publisher()
marvel.identifier = 1
marvel.name = "Marvel"
let ironMan = Hero(1455, "Iron Man", "Tony Stark", publisher: marvel, tags: ["avenger", "genius"])
ironMan.aliases = ["Shellhead"]

do {
    // 1. Mapping alone: a model becomes a record and comes back.
    let record = try ironMan.managedObject()
    print("record:", record)
    let copy = try Hero.modelInstance(managedObject: record)
    print("copy: \(copy.name) is \(copy.realName), published by \(copy.publisher?.name ?? "nobody")")

    // 2. The store: created if missing, one transaction, then closed.
    let path = CommandLine.arguments.dropFirst().first ?? "heroes.store"
    let store = try Store(path: path, models: [Hero.self])
    try store.write { transaction in
        try transaction.add(ironMan)
        try transaction.add(Hero(1009, "Hulk", "Bruce Banner", publisher: marvel, tags: ["avenger"]))
        try transaction.add(Hero(1010, "Loki", "Loki Laufeyson", publisher: marvel))
        try transaction.update(Hero.self, primaryKey: 1010, set: \.side, to: .villain)
    }
    try store.close()

    // 3. Reopen and query: by primary key, and all heroes of a type, filtered and sorted.
    let reopened = try Store(path: path, models: [Hero.self])
    try reopened.write { try $0.update(Publisher.self, primaryKey: 1, set: \.name, to: "Marvel Comics") }
    if let hero = try reopened.object(Hero.self, primaryKey: 1455) {
        print("by key: \(hero.name), tags \(hero.tags), publisher \(hero.publisher?.name ?? "-")")
    }
    let heroes = try reopened.objects(Hero.self)
    let marvelByName = try heroes
        .filter(#Predicate { $0.publisher?.name == "Marvel Comics" })
        .sorted(using: SortDescriptor(\.name))
    print("\(heroes.count) heroes stored; Marvel characters by name: \(marvelByName.map(\.name).joined(separator: ", "))")
    let good = Side.hero
    let avengers = try heroes.filter(#Predicate { $0.tags.contains("avenger") && $0.side == good })
    print("avengers: \(avengers.prefix(20).map(\.name).joined(separator: ", "))")
    let named = try heroes.filter(#Predicate { $0.name.starts(with: "H") })
    print("names starting with H: \(named.map(\.name)); plan: \(named.plan)")
    print("last name: \(try heroes.max(\.name) ?? "none"); real names: \(try heroes.distinct(\.realName).count)")
    let statistics = reopened.statistics
    print("file: \(statistics.fileSize) bytes, \(statistics.liveBytes) live, objects \(statistics.objectCounts.sorted { $0.key < $1.key })")
    try reopened.close()
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
