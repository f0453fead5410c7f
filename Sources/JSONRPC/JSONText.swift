/// JSON strings and key order as Foundation's `JSONEncoder` writes them (`[.sortedKeys, .withoutEscapingSlashes]`),
/// for what `Codec` does not write: a `JSONValue` (`JSONWriter`) and the envelope's method name.
enum JSONText {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Quoted: `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00xx`; the rest,
    /// `/` and non-ASCII included, as they are.
    static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// UTF-8 byte order, the order of Foundation's sorted keys.
    static func precedes(_ left: String, _ right: String) -> Bool {
        var left = left, right = right
        return left.withUTF8 { l in
            right.withUTF8 { r in
                let common = min(l.count, r.count)
                var index = 0
                while index < common {
                    if l[index] != r[index] { return l[index] < r[index] }
                    index += 1
                }
                return l.count < r.count
            }
        }
    }
}
