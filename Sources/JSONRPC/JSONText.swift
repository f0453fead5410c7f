/// JSON's scalars as Foundation's `JSONEncoder` writes them (`[.withoutEscapingSlashes]`), for `JSONBytesEncoder`
/// and `JSONWriter`.
enum JSONText {
    static let nullText = Array("null".utf8)
    static let trueText = Array("true".utf8)
    static let falseText = Array("false".utf8)
    static let emptyObject = Array("{}".utf8)
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

    static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            writeUnsigned(value.magnitude, into: &output)
        } else {
            writeUnsigned(UInt64(value), into: &output)
        }
    }

    static func writeUnsigned(_ value: UInt64, into output: inout [UInt8]) {
        // Twenty digits hold any UInt64; written from the end.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            var rest = value
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position..<20]))
        }
    }

    /// The shortest text that reads back as the same number (Swift's `description`), a whole number without `.0`;
    /// NaN and the infinities are refused, as JSON has no text for them.
    static func writeDouble(_ value: Double, into output: inout [UInt8], path: JSONSink?, component: JSONSink.Component) throws {
        guard value.isFinite else { throw nonConforming(value, path: path, component: component) }
        writeNumber(value.description, into: &output)
    }

    static func writeFloat(_ value: Float, into output: inout [UInt8], path: JSONSink?, component: JSONSink.Component) throws {
        guard value.isFinite else { throw nonConforming(value, path: path, component: component) }
        writeNumber(value.description, into: &output)
    }

    private static func writeNumber(_ text: String, into output: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            let whole = bytes.count > 2 && bytes[bytes.count - 2] == UInt8(ascii: ".") && bytes[bytes.count - 1] == UInt8(ascii: "0")
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<(whole ? bytes.count - 2 : bytes.count)]))
        }
    }

    private static func nonConforming(_ value: some BinaryFloatingPoint, path: JSONSink?, component: JSONSink.Component) -> EncodingError {
        EncodingError.invalidValue(
            value, .init(codingPath: JSONSink.codingPath(of: path, then: component), debugDescription: "Unable to encode \(type(of: value)).\(value) directly in JSON."))
    }

    /// The first eight UTF-8 bytes, big-endian, zero-padded: ordered as the strings are in byte order, but for ties.
    static func sortPrefix(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { bytes in
            var prefix: UInt64 = 0
            for index in 0..<min(8, bytes.count) { prefix |= UInt64(bytes[index]) << (56 - 8 * UInt64(index)) }
            return prefix
        }
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
