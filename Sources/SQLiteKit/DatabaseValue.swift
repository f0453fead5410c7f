import FoundationEssentials

/// A value as SQLite stores it.
public enum DatabaseValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift type stored in one column.
public protocol DatabaseValueConvertible {
    var databaseValue: DatabaseValue { get }
    /// nil when the stored value is not of this type (NULL included).
    init?(databaseValue: DatabaseValue)
}

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }
    public init?(databaseValue: DatabaseValue) { self = databaseValue }
}

extension Int64: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self) }
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .integer(let value): self = value
        // SQLite's own arithmetic may hand back an integral REAL (SUM, MAX over mixed columns).
        case .real(let value) where value.rounded() == value && abs(value) < 9.2e18: self = Int64(value)
        default: return nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    public init?(databaseValue: DatabaseValue) {
        guard let value = Int64(databaseValue: databaseValue) else { return nil }
        self = Int(value)
    }
}

extension Int32: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    public init?(databaseValue: DatabaseValue) {
        guard let value = Int64(databaseValue: databaseValue), let narrow = Int32(exactly: value) else { return nil }
        self = narrow
    }
}

extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    public init?(databaseValue: DatabaseValue) {
        guard let value = Int64(databaseValue: databaseValue) else { return nil }
        self = value != 0
    }
}

extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .text(let value): self = value
        case .blob(let value): self = String(decoding: value, as: UTF8.self)
        // `SELECT sqlite_version()` is text, but `PRAGMA user_version` is an integer: both read as text.
        case .integer(let value): self = String(value)
        case .real(let value): self = String(value)
        case .null: return nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob(self) }
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .blob(let value): self = value
        case .text(let value): self = Data(value.utf8)
        default: return nil
        }
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    public init?(databaseValue: DatabaseValue) {
        if case .null = databaseValue {
            self = .none
            return
        }
        guard let value = Wrapped(databaseValue: databaseValue) else { return nil }
        self = .some(value)
    }
}

/// The values bound to a statement's `?` placeholders, in order.
public typealias StatementArguments = [any DatabaseValueConvertible]
