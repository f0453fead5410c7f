extension StringProtocol {
    /// Without leading and trailing whitespace and newlines (Unicode's, as `Character.isWhitespace` says):
    /// the standard library's, since Foundation's `trimmingCharacters(in:)` links ICU (docs/ARCHITECTURE.md, "Why no GRDB and no ICU").
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
