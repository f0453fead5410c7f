// Internal: Foundation is Codec's business, not its importers' (a public import made every module that imports DriverAPI
// autolink FoundationEssentials' static archives once the package's static link compiled it, and the debug build's
// next dynamic link failed).
internal import FoundationEssentials

/// The one JSON encoding of the unit's programs: the local API's and the backend's types, the queue's bodies, the files and
/// rows they keep. Foundation's `JSONEncoder` (FoundationEssentials, no ICU) with sorted keys, so output is stable for
/// golden files and diffs, and its `JSONDecoder`. (A drift test counts Foundation's coders made anywhere else.)
public enum Codec {
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
