/// The one reader of TOML text (driverd.toml, kiosk.toml): TOML 1.0 in Swift, so a malformed file is an error with
/// its line and column, never an end of the program. It replaced TOMLKit, whose C++ parser (toml++ 3.4) aborts the
/// process on some malformed documents (an assertion, in the release build too): the config-toml fuzz target found
/// four (`[ü]`, a lone `[`, `[` and a combining mark, `s = [}`), and a file that aborts its reader stops the program
/// at every start. TOMLKit also leaked at every parse.
public enum TOMLReader {
    /// Where the text cannot be read (1-based line and column, in Unicode scalars) and why.
    public struct Error: Swift.Error, CustomStringConvertible, Equatable {
        public let line: Int
        public let column: Int
        public let reason: String
        public var description: String { "\(line):\(column): \(reason)" }
    }

    /// The document's root table.
    public static func table(_ text: String) throws(Error) -> TOMLTable {
        var parser = Parser(Array(text.unicodeScalars))
        return try parser.document()
    }
}

/// A TOML value. Dates and times are kept as their text: nothing driverd reads is one.
public enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case dateTime(String)
    case array([TOMLValue])
    case table(TOMLTable)

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var int: Int? { if case .integer(let value) = self { value } else { nil } }
    public var double: Double? { if case .float(let value) = self { value } else { nil } }
    public var bool: Bool? { if case .boolean(let value) = self { value } else { nil } }
    public var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }

    /// What it is, for an error that names it: "a TOML array".
    public var kind: String {
        switch self {
        case .string: "a TOML string"
        case .integer: "a TOML integer"
        case .float: "a TOML float"
        case .boolean: "a TOML boolean"
        case .dateTime: "a TOML date-time"
        case .array: "a TOML array"
        case .table: "a TOML table"
        }
    }
}

/// A table: its keys in the document's order.
public struct TOMLTable: Sendable, Equatable {
    public private(set) var keys: [String] = []
    private var values: [String: TOMLValue] = [:]

    public subscript(key: String) -> TOMLValue? { values[key] }

    mutating func append(_ key: String, _ value: TOMLValue) {
        if values.updateValue(value, forKey: key) == nil { keys.append(key) }
    }
}
