/// Recursive descent over the document's Unicode scalars, building tables as TOML 1.0 defines them.
struct Parser {
    /// A table while the document is read: headers and dotted keys reach into it after it was made.
    final class Table {
        enum Node {
            case value(TOMLValue)  // inline tables too: nothing may add to a value
            case table(Table)
            case tables([Table])  // an array of tables, `[[name]]`
        }
        var keys: [String] = []
        var nodes: [String: Node] = [:]
        /// Made by a `[header]` (a second header for it is an error), or by a dotted key (no header may name it).
        var byHeader = false
        var byDottedKey = false

        func set(_ key: String, _ node: Node) {
            if nodes.updateValue(node, forKey: key) == nil { keys.append(key) }
        }

        var value: TOMLTable {
            var table = TOMLTable()
            for key in keys {
                switch nodes[key] {
                case .value(let value): table.append(key, value)
                case .table(let nested): table.append(key, .table(nested.value))
                case .tables(let list): table.append(key, .array(list.map { .table($0.value) }))
                case nil: break
                }
            }
            return table
        }
    }

    let text: [Unicode.Scalar]
    var position = 0
    /// Arrays and inline tables inside one another, and the parts of a key: bounded, so a hostile file cannot
    /// exhaust the stack (tables are built and compared recursively).
    var depth = 0
    static let maximumDepth = 32

    init(_ text: [Unicode.Scalar]) {
        // A byte-order mark (Windows editors write one) is not part of the document.
        self.text = text.first == "\u{FEFF}" ? Array(text.dropFirst()) : text
    }

    var current: Unicode.Scalar? { position < text.count ? text[position] : nil }
    func peek(_ offset: Int) -> Unicode.Scalar? { position + offset < text.count ? text[position + offset] : nil }

    func error(_ reason: String, at index: Int? = nil) -> TOMLReader.Error {
        let end = min(index ?? position, text.count)
        var line = 1
        var lineStart = 0
        for offset in 0..<end where text[offset] == "\n" {
            line += 1
            lineStart = offset + 1
        }
        return TOMLReader.Error(line: line, column: end - lineStart + 1, reason: reason)
    }

    mutating func document() throws(TOMLReader.Error) -> TOMLTable {
        let root = Table()
        var table = root
        while true {
            skipWhitespace()
            guard let scalar = current else { break }
            if scalar == "#" || scalar == "\n" || scalar == "\r" {
                try endOfLine()
            } else if scalar == "[" {
                table = try header(root)
                try endOfLine()
            } else {
                try keyValue(into: table)
                try endOfLine()
            }
        }
        return root.value
    }

    // MARK: Lines, whitespace, comments

    mutating func skipWhitespace() {
        while let scalar = current, scalar == " " || scalar == "\t" { position += 1 }
    }

    /// Whitespace, then a comment if one starts here, up to (not over) the end of the line.
    mutating func skipWhitespaceAndComment() throws(TOMLReader.Error) {
        skipWhitespace()
        guard current == "#" else { return }
        position += 1
        while let scalar = current, scalar != "\n", scalar != "\r" {
            guard Self.allowedInComment(scalar) else { throw error("a control character in a comment") }
            position += 1
        }
    }

    /// Whitespace, an optional comment, then a newline or the end.
    mutating func endOfLine() throws(TOMLReader.Error) {
        try skipWhitespaceAndComment()
        guard let scalar = current else { return }
        if try newline() { return }
        throw error("expected the end of the line, found \(Self.named(scalar))")
    }

    /// Consumes `\n` or `\r\n`; false when neither is here.
    mutating func newline() throws(TOMLReader.Error) -> Bool {
        if current == "\n" {
            position += 1
            return true
        }
        if current == "\r" {
            guard peek(1) == "\n" else { throw error("a carriage return without a line feed") }
            position += 2
            return true
        }
        return false
    }

    /// Whitespace, newlines and comments between an array's values.
    mutating func skipBlankLines() throws(TOMLReader.Error) {
        repeat {
            try skipWhitespaceAndComment()
        } while try newline()
    }

    static func allowedInComment(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || (scalar.value >= 0x20 && scalar.value != 0x7F)
    }

    static func named(_ scalar: Unicode.Scalar) -> String {
        scalar.value < 0x20 || scalar.value == 0x7F ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : "'\(scalar)'"
    }

    // MARK: Tables and keys

    /// `[a.b]` or `[[a.b]]`: the table that the following keys go into.
    mutating func header(_ root: Table) throws(TOMLReader.Error) -> Table {
        let start = position
        let isArray = peek(1) == "["
        position += isArray ? 2 : 1
        skipWhitespace()
        let path = try key()
        skipWhitespace()
        guard current == "]", !isArray || peek(1) == "]" else {
            throw error(isArray ? "expected ]] to close the table header" : "expected ] to close the table header")
        }
        position += isArray ? 2 : 1
        var table = root
        for part in path.dropLast() {
            table = try descend(table, part, at: start, byDottedKey: false)
        }
        let last = path[path.count - 1]
        let name = path.joined(separator: ".")
        switch table.nodes[last] {
        case nil:
            let made = Table()
            if isArray {
                table.set(last, .tables([made]))
            } else {
                made.byHeader = true
                table.set(last, .table(made))
            }
            return made
        case .table(let existing):
            guard !isArray else { throw error("[[\(name)]]: \(name) is already a table", at: start) }
            guard !existing.byHeader, !existing.byDottedKey else {
                throw error("table [\(name)] defined twice", at: start)
            }
            existing.byHeader = true
            return existing
        case .tables(let list):
            guard isArray else { throw error("[\(name)]: \(name) is already an array of tables", at: start) }
            let made = Table()
            table.set(last, .tables(list + [made]))
            return made
        case .value:
            throw error("\(name) is already a value", at: start)
        }
    }

    /// The table under `part` of `table`, made when absent (an array of tables: its last).
    func descend(_ table: Table, _ part: String, at start: Int, byDottedKey: Bool) throws(TOMLReader.Error) -> Table {
        switch table.nodes[part] {
        case nil:
            let made = Table()
            made.byDottedKey = byDottedKey
            table.set(part, .table(made))
            return made
        case .table(let existing):
            if byDottedKey && existing.byHeader { throw error("\(part) was defined by a table header", at: start) }
            return existing
        case .tables(let list):
            guard !byDottedKey, let last = list.last else { throw error("\(part) is an array of tables", at: start) }
            return last
        case .value:
            throw error("\(part) is already a value", at: start)
        }
    }

    /// `key = value` into `table`; a dotted key makes the tables it names.
    mutating func keyValue(into table: Table) throws(TOMLReader.Error) {
        let start = position
        let path = try key()
        skipWhitespace()
        guard current == "=" else { throw error("expected = after the key \(path.joined(separator: "."))") }
        position += 1
        skipWhitespace()
        let value = try value()
        var target = table
        for part in path.dropLast() {
            target = try descend(target, part, at: start, byDottedKey: true)
        }
        let last = path[path.count - 1]
        guard target.nodes[last] == nil else { throw error("\(path.joined(separator: ".")) is defined twice", at: start) }
        target.set(last, .value(value))
    }

    /// A key: bare, quoted or dotted parts.
    mutating func key() throws(TOMLReader.Error) -> [String] {
        var parts: [String] = []
        while true {
            skipWhitespace()
            guard let scalar = current else { throw error("expected a key") }
            if scalar == "\"" || scalar == "'" {
                guard peek(1) != scalar || peek(2) != scalar else { throw error("a key cannot be a multi-line string") }
                parts.append(try string(scalar))
            } else if Self.isBare(scalar) {
                var part = String.UnicodeScalarView()
                while let next = current, Self.isBare(next) {
                    part.append(next)
                    position += 1
                }
                parts.append(String(part))
            } else {
                throw error("a key is letters A-Z a-z, digits, _ and - (or quoted), not \(Self.named(scalar))")
            }
            skipWhitespace()
            guard current == "." else { return parts }
            guard parts.count < Self.maximumDepth else { throw error("a key of more than \(Self.maximumDepth) parts") }
            position += 1
        }
    }

    static func isBare(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    // MARK: Values

    mutating func value() throws(TOMLReader.Error) -> TOMLValue {
        guard let scalar = current else { throw error("expected a value") }
        switch scalar {
        case "\"", "'":
            if peek(1) == scalar && peek(2) == scalar { return .string(try multilineString(scalar)) }
            return .string(try string(scalar))
        case "[": return try array()
        case "{": return try inlineTable()
        case "t", "f": return try boolean()
        default: return try numberOrDate()
        }
    }

    mutating func nest() throws(TOMLReader.Error) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("arrays and inline tables nested deeper than \(Self.maximumDepth)") }
    }

    mutating func array() throws(TOMLReader.Error) -> TOMLValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        var values: [TOMLValue] = []
        while true {
            try skipBlankLines()
            if current == "]" {
                position += 1
                return .array(values)
            }
            values.append(try value())
            try skipBlankLines()
            if current == "," {
                position += 1
            } else if current == "]" {
                position += 1
                return .array(values)
            } else {
                throw error(current.map { "expected , or ] in an array, found \(Self.named($0))" } ?? "an array without its ]")
            }
        }
    }

    mutating func inlineTable() throws(TOMLReader.Error) -> TOMLValue {
        try nest()
        defer { depth -= 1 }
        position += 1
        let table = Table()
        skipWhitespace()
        if current == "}" {
            position += 1
            return .table(table.value)
        }
        while true {
            skipWhitespace()
            try keyValue(into: table)
            skipWhitespace()
            if current == "," {
                position += 1
            } else if current == "}" {
                position += 1
                return .table(table.value)
            } else {
                throw error(current.map { "expected , or } in an inline table, found \(Self.named($0))" } ?? "an inline table without its }")
            }
        }
    }

    mutating func boolean() throws(TOMLReader.Error) -> TOMLValue {
        for (word, value) in [("true", true), ("false", false)] where matches(word) {
            position += word.unicodeScalars.count
            return .boolean(value)
        }
        throw error("expected a value (true, false, a number, a string, a date, an array or an inline table)")
    }

    func matches(_ word: String) -> Bool {
        var offset = 0
        for scalar in word.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }
}
