import DriverAPI

extension Codec {
    /// Decodes a value that arrived inside a larger JSON text (a request's params): written back to text for
    /// `JSONDecoder`, which also explains what it refuses.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decode(type, from: JSONWriter.bytes(value))
    }
}
