/// Basic and literal strings, single- and multi-line, and their escapes.
extension Parser {
    /// A one-line string between `"` (with escapes) or `'` (every scalar as it is).
    mutating func string(_ quote: Unicode.Scalar) throws(TOMLReader.Error) -> String {
        let start = position
        let escapes = quote == "\""
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let scalar = current, scalar != "\n", scalar != "\r" else { throw error("a string without its closing \(quote)", at: start) }
            position += 1
            if scalar == quote { return String(result) }
            if escapes && scalar == "\\" {
                result.append(try escape())
            } else {
                guard Self.allowedInComment(scalar) else {
                    throw error(escapes ? "a control character in a string: write it as an escape" : "a control character in a literal string", at: position - 1)
                }
                result.append(scalar)
            }
        }
    }

    /// A multi-line string between `"""` (escapes, and a backslash that ends a line trims the line break and the
    /// whitespace after it) or `'''` (every scalar as it is).
    mutating func multilineString(_ quote: Unicode.Scalar) throws(TOMLReader.Error) -> String {
        let start = position
        let escapes = quote == "\""
        position += 3
        _ = try newline()  // a newline right after the delimiter is not part of the string
        var result = String.UnicodeScalarView()
        while true {
            guard let scalar = current else { throw error("a multi-line string without its closing \(quote)\(quote)\(quote)", at: start) }
            if scalar == quote && peek(1) == quote && peek(2) == quote {
                // Up to two quotes may end the string's content right before its delimiter.
                var extra = 0
                while extra < 2 && peek(3 + extra) == quote { extra += 1 }
                for _ in 0..<extra { result.append(quote) }
                position += 3 + extra
                return String(result)
            }
            if escapes && scalar == "\\" {
                var ahead = position + 1
                while ahead < text.count, text[ahead] == " " || text[ahead] == "\t" { ahead += 1 }
                if ahead < text.count, text[ahead] == "\n" || (text[ahead] == "\r" && ahead + 1 < text.count && text[ahead + 1] == "\n") {
                    position = ahead
                    repeat { skipWhitespace() } while try newline()
                    continue
                }
                position += 1
                result.append(try escape())
                continue
            }
            if try newline() {
                result.append("\n")
                continue
            }
            guard Self.allowedInComment(scalar) else {
                throw error(escapes ? "a control character in a string: write it as an escape" : "a control character in a literal string")
            }
            result.append(scalar)
            position += 1
        }
    }

    /// The scalar an escape stands for; the backslash is already read.
    mutating func escape() throws(TOMLReader.Error) -> Unicode.Scalar {
        guard let scalar = current else { throw error("a string ends in a backslash") }
        position += 1
        switch scalar {
        case "b": return "\u{8}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{C}"
        case "r": return "\r"
        case "e": return "\u{1B}"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let digits = scalar == "u" ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<digits {
                guard let digit = current, let nibble = Self.hexDigit(digit) else { throw error("\\\(scalar) needs \(digits) hexadecimal digits") }
                value = value << 4 | nibble
                position += 1
            }
            guard let unicode = Unicode.Scalar(value) else { throw error("\\\(scalar) names no Unicode scalar value") }
            return unicode
        default:
            throw error("an unknown escape \\\(scalar) in a string", at: position - 2)
        }
    }

    static func hexDigit(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 48
        case "a"..."f": scalar.value - 87
        case "A"..."F": scalar.value - 55
        default: nil
        }
    }
}
