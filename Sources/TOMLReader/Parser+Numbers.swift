/// Integers (decimal, hexadecimal, octal, binary), floats, and dates and times (kept as their text).
extension Parser {
    mutating func numberOrDate() throws(TOMLReader.Error) -> TOMLValue {
        let start = position
        var token = String.UnicodeScalarView()
        while let scalar = current, Self.inNumberOrDate(scalar) {
            token.append(scalar)
            position += 1
        }
        // A date and a time may be separated by a space.
        if current == " ", Self.isDate(token), let next = peek(1), ("0"..."9").contains(next) {
            position += 1
            token.append(" ")
            while let scalar = current, Self.inNumberOrDate(scalar) {
                token.append(scalar)
                position += 1
            }
        }
        let text = String(token)
        guard !text.isEmpty else {
            throw error(current.map { "expected a value, found \(Self.named($0))" } ?? "expected a value")
        }
        if let value = Self.dateTime(token) { return value }
        if let value = try integer(token, at: start) { return value }
        if let value = Self.float(token) { return value }
        throw error("\(text) is not a number, a date or a time", at: start)
    }

    static func inNumberOrDate(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "0"..."9", "A"..."Z", "a"..."z", "_", "+", "-", ".", ":": true
        default: false
        }
    }

    /// Digits with single underscores between them (`1_000`), in the given base.
    static func digits(_ scalars: some BidirectionalCollection<Unicode.Scalar>, base: UInt32) -> Bool {
        guard let first = scalars.first, let last = scalars.last, first != "_", last != "_" else { return false }
        var previous: Unicode.Scalar = "_"
        for scalar in scalars {
            if scalar == "_" {
                if previous == "_" { return false }
            } else {
                guard let value = hexDigit(scalar), value < base else { return false }
            }
            previous = scalar
        }
        return true
    }

    func integer(_ token: String.UnicodeScalarView, at start: Int) throws(TOMLReader.Error) -> TOMLValue? {
        let scalars = Array(token)
        var base: UInt32 = 10
        var body = scalars[...]
        var negative = false
        if scalars.count > 2, scalars[0] == "0", let radix = ["x": UInt32(16), "o": 8, "b": 2][Character(scalars[1])] {
            base = radix
            body = scalars[2...]
        } else {
            if let sign = body.first, sign == "+" || sign == "-" {
                negative = sign == "-"
                body = body.dropFirst()
            }
            // No leading zeros: 0, or a digit 1-9 first.
            if body.count > 1 && body.first == "0" { return nil }
        }
        guard Self.digits(body, base: base) else { return nil }
        var magnitude: UInt64 = 0
        for scalar in body where scalar != "_" {
            let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: UInt64(base))
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(Self.hexDigit(scalar) ?? 0))
            guard !overflow, !carry else { throw error("\(String(token)) is out of a 64-bit integer's range", at: start) }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw error("\(String(token)) is out of a 64-bit integer's range", at: start) }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? Int(Int64.min) : -Int(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { throw error("\(String(token)) is out of a 64-bit integer's range", at: start) }
        return .integer(Int(magnitude))
    }

    static func float(_ token: String.UnicodeScalarView) -> TOMLValue? {
        var body = Array(token)[...]
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        let word = String(String.UnicodeScalarView(body))
        if word == "inf" { return .float(sign == "-" ? -.infinity : .infinity) }
        if word == "nan" { return .float(.nan) }
        // integer part, then a fraction, an exponent or both
        let exponentAt = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = body[..<(exponentAt ?? body.endIndex)]
        let dot = mantissa.firstIndex(of: ".")
        let whole = mantissa[..<(dot ?? mantissa.endIndex)]
        guard digits(whole, base: 10), !(whole.count > 1 && whole.first == "0") else { return nil }
        if let dot {
            guard digits(mantissa[(dot + 1)...], base: 10) else { return nil }
        }
        if let exponentAt {
            var exponent = body[(exponentAt + 1)...]
            if let first = exponent.first, first == "+" || first == "-" { exponent = exponent.dropFirst() }
            guard digits(exponent, base: 10) else { return nil }
        }
        guard dot != nil || exponentAt != nil else { return nil }
        let cleaned = sign + String(String.UnicodeScalarView(body.filter { $0 != "_" }))
        return Double(cleaned).map { .float($0) }
    }

    /// A date (1979-05-27), a time (07:32:00.999) or both, with an offset (Z, -07:00) or none.
    static func dateTime(_ token: String.UnicodeScalarView) -> TOMLValue? {
        let scalars = Array(token)
        var index = 0
        func number(_ count: Int, max: Int) -> Bool {
            guard index + count <= scalars.count else { return false }
            var value = 0
            for scalar in scalars[index..<(index + count)] {
                guard ("0"..."9").contains(scalar) else { return false }
                value = value * 10 + Int(scalar.value - 48)
            }
            index += count
            return value <= max
        }
        func expect(_ scalar: Unicode.Scalar) -> Bool {
            guard index < scalars.count, scalars[index] == scalar else { return false }
            index += 1
            return true
        }
        func time() -> Bool {
            guard number(2, max: 23), expect(":"), number(2, max: 59), expect(":"), number(2, max: 60) else { return false }
            if index < scalars.count, scalars[index] == "." {
                index += 1
                let digitsStart = index
                while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                guard index > digitsStart else { return false }
            }
            return true
        }
        let text = String(token)
        if isTime(token) {
            return time() && index == scalars.count ? .dateTime(text) : nil
        }
        guard isDate(token), number(4, max: 9999), expect("-"), number(2, max: 12), expect("-"), number(2, max: 31) else { return nil }
        if index == scalars.count { return .dateTime(text) }
        guard expect("T") || expect("t") || expect(" "), time() else { return nil }
        if index == scalars.count { return .dateTime(text) }
        if expect("Z") || expect("z") { return index == scalars.count ? .dateTime(text) : nil }
        guard expect("+") || expect("-"), number(2, max: 23), expect(":"), number(2, max: 59), index == scalars.count else { return nil }
        return .dateTime(text)
    }

    /// Begins like a date: four digits and a dash.
    static func isDate(_ token: String.UnicodeScalarView) -> Bool {
        let scalars = Array(token.prefix(5))
        return scalars.count == 5 && scalars[..<4].allSatisfy { ("0"..."9").contains($0) } && scalars[4] == "-"
    }

    /// Begins like a time: two digits and a colon.
    static func isTime(_ token: String.UnicodeScalarView) -> Bool {
        let scalars = Array(token.prefix(3))
        return scalars.count == 3 && scalars[..<2].allSatisfy { ("0"..."9").contains($0) } && scalars[2] == ":"
    }
}
