import DriverAPI
import FoundationEssentials

/// The one JSON encoding of the local API's and the backend's types: Foundation's `JSONEncoder` (FoundationEssentials,
/// no ICU) with sorted keys, so output is stable for golden files and diffs, and its `JSONDecoder`.
public enum Codec {
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// Decodes a value that arrived inside a larger JSON text (a request's params): written back to text for
    /// `JSONDecoder`, which also explains what it refuses.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decode(type, from: JSONWriter.bytes(value))
    }
}
