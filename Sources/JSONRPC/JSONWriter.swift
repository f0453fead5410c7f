import DriverAPI

/// Serialises a `JSONValue` compactly, numbers as their literal text.
public enum JSONWriter {
    public static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): JSONText.writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // Sorted so output is deterministic (golden files, logs), in `Codec`'s order (UTF-8 bytes): `String`'s `<`
            // compares normalised text, and differs for keys that are not in NFC.
            for (position, key) in members.keys.sorted(by: JSONText.precedes).enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(members[key]!, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, into: &output)
        return output
    }

    public static func string(_ value: JSONValue) -> String { String(decoding: bytes(value), as: UTF8.self) }
}
