/// Hides secret values in a configuration file's text before it leaves the unit (diagnostic bundles).
public enum ConfigRedaction {
    public static let placeholder = "<redacted>"

    /// Key names whose values are secrets, in any section (`password = …`, `backend.password = …`).
    static let secretNames = ["password", "secret", "token", "key"]

    /// The text with the value of every secret key replaced by `"<redacted>"`; comments and layout stay.
    /// Works line by line, so it also redacts a file that no longer parses.
    public static func redact(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lines.append(redactLine(line))
        }
        return lines.joined(separator: "\n")
    }

    static func redactLine(_ line: Substring) -> Substring {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { return line }
        let key = trimmed[..<equals].trimmingTrailingSpaces().lowercased()
        let name = key.split(separator: ".").last.map { $0.trimmingCharacters(in: "\"'") } ?? key
        guard secretNames.contains(where: { name == $0 || name.hasSuffix("_" + $0) }) else { return line }
        let indent = line[..<trimmed.startIndex]
        return "\(indent)\(trimmed[..<equals])= \"\(placeholder)\""
    }
}

extension Substring {
    fileprivate func trimmingTrailingSpaces() -> Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[startIndex..<end]
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
