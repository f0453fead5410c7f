import FoundationEssentials

/// Decodes a `Decodable` record from a row, by column name (the record's coding keys). Columns hold
/// integers, reals, text and blobs; a non-scalar property (a String-backed enum) decodes from its column's
/// single value, and `Data` from a blob.
struct RowDecoder: Decoder {
    let row: Row
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Container<Key>(row: row, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a row is not a list"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a row is not a single value"))
    }

    private struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: Row
        var codingPath: [any CodingKey]
        var allKeys: [Key] { row.columns.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { row.columns.contains(key.stringValue) }

        func decodeNil(forKey key: Key) throws -> Bool { row[key.stringValue] == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try ValueDecoder(value: row[key.stringValue], parentPath: codingPath, key: key).decode(type)
        }

        private func scalar<T: DatabaseValueConvertible & Decodable>(_ type: T.Type, _ key: Key) throws -> T {
            try ValueDecoder(value: row[key.stringValue], parentPath: codingPath, key: key).scalar(type)
        }

        // Every scalar goes through the generic path; the narrow integer and float types convert from Int64 and Double.
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeConverted(type, forKey: key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeConverted(type, forKey: key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeConverted(type, forKey: key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeConverted(type, forKey: key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeConverted(type, forKey: key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeConverted(type, forKey: key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeConverted(type, forKey: key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeConverted(type, forKey: key) }

        private func decodeConverted<T: BinaryInteger>(_ type: T.Type, forKey key: Key) throws -> T {
            let wide = try scalar(Int64.self, key)
            guard let value = T(exactly: wide) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "\(wide) does not fit \(T.self)")
            }
            return value
        }

        private func decodeConverted(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try scalar(Double.self, key)) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath + [key], debugDescription: "a column holds one value"))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath + [key], debugDescription: "a column holds one value"))
        }

        func superDecoder() throws -> any Decoder { RowDecoder(row: row, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row, codingPath: codingPath + [key]) }
    }
}

/// One column's value, for a property that decodes itself from a single value (an enum with a raw value).
struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    /// The path is put together only when asked (an error): building it for every column was an array each.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "a column holds one value"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a column holds one value"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type,
           let decoded = convertible.init(databaseValue: value) as? T {
            return decoded
        }
        if T.self is any DatabaseValueConvertible.Type {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "the column holds \(value)"))
        }
        return try T(from: self)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) }
    func decode(_ type: String.Type) throws -> String { try scalar(type) }
    func decode(_ type: Double.Type) throws -> Double { try scalar(type) }
    func decode(_ type: Int.Type) throws -> Int { try scalar(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) }
    func decode(_ type: Float.Type) throws -> Float { Float(try scalar(Double.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try narrow(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try narrow(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try narrow(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try narrow(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try narrow(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try narrow(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try narrow(type) }

    private func narrow<T: BinaryInteger>(_ type: T.Type) throws -> T {
        let wide = try scalar(Int64.self)
        guard let value = T(exactly: wide) else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "\(wide) does not fit \(T.self)"))
        }
        return value
    }

    func scalar<T: DatabaseValueConvertible>(_ type: T.Type) throws -> T {
        guard let decoded = T(databaseValue: value) else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "the column holds \(value)"))
        }
        return decoded
    }
}
