import Foundation

/// The path of the first place where `actual` differs from `expected`, walking both with `Mirror`
/// field by field, or `nil` when they are equal. Floating-point values compare by bit pattern
/// (NaN equals itself, -0 is not +0); sets compare as sets and dictionaries by key, whatever
/// order they list their elements in; class instances met again (shared or cyclic) are compared
/// once. Values for which `skip` answers true are not compared.
public func firstDifference(
    _ expected: Any, _ actual: Any, path: String = "", skip: (Any) -> Bool = { _ in false }
) -> String? {
    withoutActuallyEscaping(skip) { skip in
        var comparison = FieldComparison(skip: skip)
        return comparison.difference(expected, actual, path: path.isEmpty ? "model" : path)
    }
}

private struct FieldComparison {
    let skip: (Any) -> Bool
    /// Pairs of instances already compared (or being compared, further up).
    var visited = Set<[ObjectIdentifier]>()

    mutating func difference(_ expected: Any, _ actual: Any, path: String) -> String? {
        if skip(expected) { return nil }
        guard type(of: expected) == type(of: actual) else {
            return "\(path): expected a \(type(of: expected)), found a \(type(of: actual))"
        }
        if let difference = leafDifference(expected, actual, path: path) {
            return difference.isEmpty ? nil : difference
        }
        let left = Mirror(reflecting: expected)
        let right = Mirror(reflecting: actual)
        if left.displayStyle == .class {
            let pair = [ObjectIdentifier(expected as AnyObject), ObjectIdentifier(actual as AnyObject)]
            if !visited.insert(pair).inserted { return nil }
        }
        switch left.displayStyle {
        case .optional:
            switch (left.children.first, right.children.first) {
            case (nil, nil): return nil
            case (let some?, let other?): return difference(some.value, other.value, path: path + "?")
            case (nil, _?): return "\(path): expected nil, found \(actual)"
            case (_?, nil): return "\(path): expected \(expected), found nil"
            }
        case .set:
            if let a = expected as? AnyHashable, let b = actual as? AnyHashable {
                return a == b ? nil : "\(path): expected the set \(expected), found \(actual)"
            }
            return describedDifference(expected, actual, path: path)
        case .dictionary:
            let a = entries(left)
            let b = entries(right)
            guard a.keys.sorted() == b.keys.sorted() else {
                return "\(path): expected keys \(a.keys.sorted()), found \(b.keys.sorted())"
            }
            for key in a.keys.sorted() {
                if let difference = difference(a[key]!, b[key]!, path: "\(path)[\(key)]") { return difference }
            }
            return nil
        case .collection:
            let a = Array(left.children)
            let b = Array(right.children)
            guard a.count == b.count else { return "\(path): expected \(a.count) elements, found \(b.count)" }
            for index in a.indices {
                if let difference = difference(a[index].value, b[index].value, path: "\(path)[\(index)]") { return difference }
            }
            return nil
        default:
            return fieldsDifference(left, right, path: path)
        }
    }

    /// Fields of a struct, class (with its superclasses), tuple or enum payload, by position.
    private mutating func fieldsDifference(_ left: Mirror, _ right: Mirror, path: String) -> String? {
        let a = Array(left.children)
        let b = Array(right.children)
        guard a.count == b.count else { return "\(path): expected \(a.count) fields, found \(b.count)" }
        for (x, y) in zip(a, b) {
            let name = x.label ?? "?"
            if let difference = difference(x.value, y.value, path: "\(path).\(name)") { return difference }
        }
        if let superLeft = left.superclassMirror, let superRight = right.superclassMirror {
            return fieldsDifference(superLeft, superRight, path: path)
        }
        return nil
    }

    /// `""` when two single values are equal, a description when they differ, `nil` when the
    /// values are not single values and must be walked.
    private func leafDifference(_ expected: Any, _ actual: Any, path: String) -> String? {
        switch (expected, actual) {
        case let (a as Double, b as Double):
            return a.bitPattern == b.bitPattern ? "" : "\(path): expected \(a), found \(b)"
        case let (a as Float, b as Float):
            return a.bitPattern == b.bitPattern ? "" : "\(path): expected \(a), found \(b)"
        case let (a as Date, b as Date):
            let x = a.timeIntervalSinceReferenceDate
            let y = b.timeIntervalSinceReferenceDate
            return x.bitPattern == y.bitPattern ? "" : "\(path): expected \(a), found \(b)"
        case (is String, _), (is Data, _), (is UUID, _), (is URL, _), (is Decimal, _), (is Bool, _),
             (is any FixedWidthInteger, _):
            return describedDifference(expected, actual, path: path) ?? ""
        default:
            let mirror = Mirror(reflecting: expected)
            // Enum cases without a payload.
            if mirror.displayStyle == .enum, mirror.children.isEmpty {
                return describedDifference(expected, actual, path: path) ?? ""
            }
            return nil
        }
    }

    private func describedDifference(_ expected: Any, _ actual: Any, path: String) -> String? {
        if let a = expected as? AnyHashable, let b = actual as? AnyHashable {
            return a == b ? nil : "\(path): expected \(String(reflecting: expected)), found \(String(reflecting: actual))"
        }
        let a = String(reflecting: expected)
        let b = String(reflecting: actual)
        return a == b ? nil : "\(path): expected \(a), found \(b)"
    }

    private func entries(_ mirror: Mirror) -> [String: Any] {
        var entries: [String: Any] = [:]
        for child in mirror.children {
            let pair = Array(Mirror(reflecting: child.value).children)
            guard pair.count == 2 else { continue }
            entries[String(reflecting: pair[0].value)] = pair[1].value
        }
        return entries
    }
}
