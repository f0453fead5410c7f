/// A Debian package version (`[epoch:]upstream[-revision]`), ordered as dpkg orders them (`dpkg
/// --compare-versions`): `1.0~rc1 < 1.0 < 1.0+fix < 1.0-1 < 1.0.1 < 1:0.9`.
public struct DebianVersion: Comparable, Sendable, CustomStringConvertible {
    public let epoch: Int
    public let upstream: String
    public let revision: String

    /// nil when `text` is not a version dpkg would take (empty, a bad epoch, an upstream not starting with a digit,
    /// characters outside `A-Za-z0-9.+~-:`).
    public init?(_ text: String) {
        var rest = Substring(text)
        if let colon = rest.firstIndex(of: ":") {
            guard let epoch = Int(rest[..<colon]), epoch >= 0 else { return nil }
            self.epoch = epoch
            rest = rest[rest.index(after: colon)...]
        } else {
            epoch = 0
        }
        if let dash = rest.lastIndex(of: "-") {
            revision = String(rest[rest.index(after: dash)...])
            rest = rest[..<dash]
            guard !revision.isEmpty else { return nil }
        } else {
            revision = ""
        }
        upstream = String(rest)
        let allowed = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || ".+~-:".contains(c)) }
        guard let first = upstream.first, first.isASCII, first.isNumber, upstream.allSatisfy(allowed), revision.allSatisfy(allowed) else { return nil }
    }

    public var description: String {
        (epoch > 0 ? "\(epoch):" : "") + upstream + (revision.isEmpty ? "" : "-\(revision)")
    }

    public static func == (a: Self, b: Self) -> Bool { compare(a, b) == 0 }
    public static func < (a: Self, b: Self) -> Bool { compare(a, b) < 0 }

    private static func compare(_ a: Self, _ b: Self) -> Int {
        if a.epoch != b.epoch { return a.epoch < b.epoch ? -1 : 1 }
        let upstream = compare(Array(a.upstream.utf8), Array(b.upstream.utf8))
        return upstream != 0 ? upstream : compare(Array(a.revision.utf8), Array(b.revision.utf8))
    }

    /// dpkg's `verrevcmp`: alternating runs of non-digits (by `order`) and digits (by value).
    private static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var i = 0, j = 0
        func isDigit(_ bytes: [UInt8], _ k: Int) -> Bool { k < bytes.count && (48...57).contains(bytes[k]) }
        while i < a.count || j < b.count {
            while (i < a.count && !isDigit(a, i)) || (j < b.count && !isDigit(b, j)) {
                let x = order(a, i), y = order(b, j)
                if x != y { return x < y ? -1 : 1 }
                i += 1
                j += 1
            }
            while i < a.count && a[i] == 48 { i += 1 }
            while j < b.count && b[j] == 48 { j += 1 }
            var firstDifference = 0
            while isDigit(a, i) && isDigit(b, j) {
                if firstDifference == 0 { firstDifference = Int(a[i]) - Int(b[j]) }
                i += 1
                j += 1
            }
            if isDigit(a, i) { return 1 }
            if isDigit(b, j) { return -1 }
            if firstDifference != 0 { return firstDifference < 0 ? -1 : 1 }
        }
        return 0
    }

    /// A character's weight: `~` before the end, the end and digits, then letters, then everything else.
    private static func order(_ bytes: [UInt8], _ k: Int) -> Int {
        guard k < bytes.count else { return 0 }
        let c = bytes[k]
        if (48...57).contains(c) { return 0 }
        if (65...90).contains(c) || (97...122).contains(c) { return Int(c) }
        if c == UInt8(ascii: "~") { return -1 }
        return Int(c) + 256
    }
}
