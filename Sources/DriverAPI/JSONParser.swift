/// A strict RFC 8259 parser that keeps numbers as their literal text.
///
/// Strict on purpose: garbage on the socket must become a parse error, never a guess. Depth is bounded so a
/// hostile line of `[[[[...` cannot exhaust the stack.
public struct JSONParser {
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    public static let maxDepth = 256

    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(Error) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    public static func parse(_ bytes: some Collection<UInt8>) throws(Error) -> JSONValue {
        let result: Result<JSONValue, Error> = Array(bytes).withUnsafeBytes { buffer in
            Result { () throws(Error) in try parse(buffer) }
        }
        return try result.get()
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private func error(_ reason: String) -> Error { Error(offset: index, reason: reason) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(Error) -> JSONValue {
        guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Error) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(Error) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(Error) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(Error) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw error("invalid number") }
        index += 1
        if first != UInt8(ascii: "0") {
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, isDigit(byte) else { throw error("invalid number: digit expected after '.'") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw error("invalid number: exponent expected") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(Error) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw error("control character in string") }
            index += 1
        }
        guard let stop = current else { throw error("unterminated string") }
        var scalars = try validatedUTF8(start..<index)
        if stop == UInt8(ascii: "\"") {
            index += 1
            return scalars
        }
        // Slow path: escapes.
        while true {
            guard let byte = current else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return scalars
            case UInt8(ascii: "\\"):
                index += 1
                scalars.unicodeScalars.append(try parseEscape())
            default:
                let runStart = index
                while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    guard byte >= 0x20 else { throw error("control character in string") }
                    index += 1
                }
                scalars += try validatedUTF8(runStart..<index)
            }
        }
    }

    private func validatedUTF8(_ range: Range<Int>) throws(Error) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        guard let text = String(validating: slice, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
        return text
    }

    private mutating func parseEscape() throws(Error) -> Unicode.Scalar {
        guard let byte = current else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("lone high surrogate") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate") }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("lone low surrogate") }
            return scalar
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws(Error) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
