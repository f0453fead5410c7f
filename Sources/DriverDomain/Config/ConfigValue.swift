/// A configuration value as the file gave it, before validation.
public enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case integer(Int)
    case double(Double)
    case bool(Bool)
    /// Arrays, tables, dates: kept only to name them in an error.
    case other(String)

    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .other(let value): value
        }
    }
}

/// A problem with one configuration key, worded for an operator.
public struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    public let key: String
    public let message: String

    public init(key: String, message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "\(key): \(message)" }
}
