#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif
import DriverAPI

/// The one JSON encoding of API types: sorted keys, so output is stable for golden files and diffs.
public enum Codec {
    /// Foundation's `JSONEncoder` text with `[.sortedKeys, .withoutEscapingSlashes]`, made by `JSONBytesEncoder`.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        try JSONBytesEncoder.encode(value)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// Decodes a value that arrived inside a larger JSON text: read from the parsed value when the type can
    /// (`JSONValueDecodable`), else written back to text for `JSONDecoder`, which also explains what it refuses.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let direct = T.self as? any JSONValueDecodable.Type, let decoded = try? direct.init(jsonValue: value) as? T {
            return decoded
        }
        return try decode(type, from: JSONWriter.bytes(value))
    }
}
