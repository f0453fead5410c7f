import FoundationEssentials

/// Encodes an `Encodable` record into column values by coding key, the inverse of `RowDecoder`. A nil
/// optional is written as NULL (not left out), so saving a record clears a column it cleared.
final class RowEncoder: Encoder {
    private(set) var columns: [(name: String, value: DatabaseValue)] = []
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func columns(of record: some Encodable) throws -> [(name: String, value: DatabaseValue)] {
        let encoder = RowEncoder()
        try record.encode(to: encoder)
        return encoder.columns
    }

    /// A column's value. Synthesised coders name each key once; a record that named one twice fails at SQLite
    /// ("column specified more than once"), not silently.
    func set(_ name: String, _ value: DatabaseValue) { columns.append((name, value)) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Container<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("a record encodes into named columns")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        preconditionFailure("a record encodes into named columns")
    }

    private struct Container<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: RowEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { encoder.set(key.stringValue, .null) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key))
        }

        mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { encoder.set(key.stringValue, .text(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws { encoder.set(key.stringValue, .real(value)) }
        mutating func encode(_ value: Float, forKey key: Key) throws { encoder.set(key.stringValue, .real(Double(value))) }
        mutating func encode(_ value: Int, forKey key: Key) throws { encoder.set(key.stringValue, .integer(Int64(value))) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { encoder.set(key.stringValue, .integer(Int64(value))) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { encoder.set(key.stringValue, .integer(Int64(value))) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { encoder.set(key.stringValue, .integer(Int64(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { encoder.set(key.stringValue, .integer(value)) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key)) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key)) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key)) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key)) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { encoder.set(key.stringValue, try ValueEncoder.encode(value, key: key)) }

        // Synthesised `encode(to:)` leaves a nil optional out by calling these; a record writes it as NULL.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            encoder.set(key.stringValue, try value.map { try ValueEncoder.encode($0, key: key) } ?? .null)
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { encoder.set(key.stringValue, value.databaseValue) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            preconditionFailure("column \(key.stringValue): a column holds one value")
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            preconditionFailure("column \(key.stringValue): a column holds one value")
        }

        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }
}

/// One property's value: a scalar directly, anything else (an enum with a raw value) through its single value.
private final class ValueEncoder: Encoder, SingleValueEncodingContainer {
    var value: DatabaseValue = .null
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    static func encode(_ value: some Encodable, key: any CodingKey) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible { return convertible.databaseValue }
        if value is any BinaryInteger || value is Float { return try scalar(value) }
        let encoder = ValueEncoder(codingPath: [key])
        try value.encode(to: encoder)
        return encoder.value
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        preconditionFailure("\(codingPath.map(\.stringValue)): a column holds one value")
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("\(codingPath.map(\.stringValue)): a column holds one value")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { value = .null }
    func encode(_ value: Bool) throws { self.value = value.databaseValue }
    func encode(_ value: String) throws { self.value = .text(value) }
    func encode(_ value: Double) throws { self.value = .real(value) }
    func encode(_ value: Float) throws { self.value = try Self.scalar(value) }
    func encode(_ value: Int) throws { self.value = .integer(Int64(value)) }
    func encode(_ value: Int8) throws { self.value = try Self.scalar(value) }
    func encode(_ value: Int16) throws { self.value = try Self.scalar(value) }
    func encode(_ value: Int32) throws { self.value = .integer(Int64(value)) }
    func encode(_ value: Int64) throws { self.value = .integer(value) }
    func encode(_ value: UInt) throws { self.value = try Self.scalar(value) }
    func encode(_ value: UInt8) throws { self.value = try Self.scalar(value) }
    func encode(_ value: UInt16) throws { self.value = try Self.scalar(value) }
    func encode(_ value: UInt32) throws { self.value = try Self.scalar(value) }
    func encode(_ value: UInt64) throws { self.value = try Self.scalar(value) }

    /// Narrow and unsigned integers as SQLite's 64-bit integer; a UInt64 past Int64.max is refused, not wrapped.
    static func scalar(_ value: some Encodable) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible { return convertible.databaseValue }
        if let float = value as? Float { return .real(Double(float)) }
        if let integer = value as? any BinaryInteger {
            guard let wide = Int64(exactly: integer) else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(integer) does not fit a 64-bit integer"))
            }
            return .integer(wide)
        }
        throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "not a scalar"))
    }

    func encode<T: Encodable>(_ value: T) throws { self.value = try Self.encode(value, key: codingPath.last!) }
}
