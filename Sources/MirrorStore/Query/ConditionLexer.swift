/// One token of a condition written as text, and the character offset it starts at.
struct ConditionToken: Equatable {
    enum Kind: Equatable {
        /// A property name or a dotted path: `name`, `publisher.name`.
        case path(String)
        case string(String)
        case integer(Int64)
        case unsigned(UInt64)
        case double(Double)
        case bool(Bool)
        case null
        case comparison(PropertyComparison)
        case and, or, not, open, close
        case end
    }

    let kind: Kind
    let offset: Int
}

/// Splits a condition written as text into tokens. Anything it does not recognise is a
/// ``QueryError`` naming the offset; it never traps on any input.
struct ConditionLexer {
    private let characters: [Character]
    private var position = 0

    init(_ text: String) {
        characters = Array(text)
    }

    /// Every token of the text, ending with ``ConditionToken/Kind/end``.
    static func tokens(of text: String) throws(QueryError) -> [ConditionToken] {
        var lexer = ConditionLexer(text)
        var tokens: [ConditionToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> QueryError {
        QueryError(.syntax(offset: offset, message: message))
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        characters.indices.contains(position + ahead) ? characters[position + ahead] : nil
    }

    private mutating func next() throws(QueryError) -> ConditionToken {
        while let character = peek(), character.isWhitespace { position += 1 }
        let start = position
        guard let character = peek() else { return ConditionToken(kind: .end, offset: start) }
        let kind: ConditionToken.Kind
        switch character {
        case "(": position += 1; kind = .open
        case ")": position += 1; kind = .close
        case "\"": kind = .string(try string())
        case "=", "!", "<", ">", "&", "|": kind = try symbol(character)
        case _ where character.isNumber || (character == "-" && peek(1)?.isNumber == true): kind = try number()
        case _ where character.isLetter || character == "_": kind = path()
        default: throw error("unexpected \(String(character).debugDescription)", at: start)
        }
        return ConditionToken(kind: kind, offset: start)
    }

    /// An operator: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||` or `!`.
    private mutating func symbol(_ first: Character) throws(QueryError) -> ConditionToken.Kind {
        let start = position
        position += 1
        let pair: ConditionToken.Kind? = switch (first, peek()) {
        case ("=", "="): .comparison(.equal)
        case ("!", "="): .comparison(.notEqual)
        case ("<", "="): .comparison(.ordered(.lessThanOrEqual))
        case (">", "="): .comparison(.ordered(.greaterThanOrEqual))
        case ("&", "&"): .and
        case ("|", "|"): .or
        default: nil
        }
        if let pair {
            position += 1
            return pair
        }
        switch first {
        case "!": return .not
        case "<": return .comparison(.ordered(.lessThan))
        case ">": return .comparison(.ordered(.greaterThan))
        case "=": throw error("use == to compare", at: start)
        default: throw error("use && for and, || for or", at: start)
        }
    }

    /// A quoted string; `\"`, `\\`, `\n`, `\t`, `\r` and `\u{…}` are its escapes.
    private mutating func string() throws(QueryError) -> String {
        let start = position
        position += 1
        var text = ""
        while let character = peek() {
            position += 1
            switch character {
            case "\"": return text
            case "\\":
                let escapeOffset = position - 1
                guard let escaped = peek() else { break }
                position += 1
                switch escaped {
                case "\"", "\\": text.append(escaped)
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                case "u": text.unicodeScalars.append(try unicodeEscape(at: escapeOffset))
                default: throw error("unknown escape \\\(escaped) in a string", at: escapeOffset)
                }
            default: text.append(character)
            }
        }
        throw error("the string has no closing quote", at: start)
    }

    /// `\u{1F600}`: one to eight hexadecimal digits naming a Unicode scalar.
    private mutating func unicodeEscape(at offset: Int) throws(QueryError) -> Unicode.Scalar {
        guard peek() == "{" else { throw error("write a Unicode escape as \\u{…}", at: offset) }
        position += 1
        var digits = ""
        while let character = peek(), character != "}" {
            guard character.isHexDigit, digits.count < 8 else { throw error("write a Unicode escape as \\u{…}", at: offset) }
            digits.append(character)
            position += 1
        }
        guard peek() == "}", let value = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(value) else {
            throw error("\\u{\(digits)} is not a Unicode scalar", at: offset)
        }
        position += 1
        return scalar
    }

    /// An integer (`42`, `-7`) or a double (`4.5`, `-1e3`).
    private mutating func number() throws(QueryError) -> ConditionToken.Kind {
        let start = position
        var text = ""
        var isDouble = false
        if peek() == "-" { text.append("-"); position += 1 }
        while let character = peek() {
            if character.isASCII, character.isNumber {
                text.append(character)
            } else if character == "." || character == "e" || character == "E" {
                isDouble = true
                text.append(character)
            } else if (character == "-" || character == "+"), text.last == "e" || text.last == "E" {
                text.append(character)
            } else if character.isLetter || character.isNumber || character == "_" {
                throw error("\(String(character).debugDescription) in a number", at: position)
            } else {
                break
            }
            position += 1
        }
        if isDouble {
            guard let value = Double(text), value.isFinite else { throw error("\(text) is not a number", at: start) }
            return .double(value)
        }
        if let value = Int64(text) { return .integer(value) }
        if let value = UInt64(text) { return .unsigned(value) }
        throw error("\(text) is too large for an integer", at: start)
    }

    /// A property path, or one of the words `true`, `false` and `nil`.
    private mutating func path() -> ConditionToken.Kind {
        var text = ""
        while let character = peek(), character.isLetter || character.isNumber || character == "_" || character == "." {
            text.append(character)
            position += 1
        }
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "nil": return .null
        default: return .path(text)
        }
    }
}
