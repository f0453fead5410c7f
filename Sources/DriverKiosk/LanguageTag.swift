/// A language tag as the screen sends it (BCP 47's language and region only): `de`, `pt-BR`, `es-419`. Parsed once,
/// where it comes in; the catalog goes by `language`, the voice by both.
public struct LanguageTag: Sendable, Equatable, CustomStringConvertible {
    /// Lowercased: `pt`.
    public let language: String
    /// Two letters uppercased (`BR`) or three digits (`419`); nil for none.
    public let region: String?

    /// nil unless two or three ASCII letters, then optionally `-` and a region of two letters or three digits.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, (2...3).contains(parts[0].count), parts[0].allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        language = parts[0].lowercased()
        guard parts.count == 2 else {
            region = nil
            return
        }
        let region = parts[1]
        guard (region.count == 2 && region.allSatisfy { $0.isASCII && $0.isLetter })
            || (region.count == 3 && region.allSatisfy { $0.isASCII && $0.isNumber })
        else { return nil }
        self.region = region.uppercased()
    }

    public var description: String { region.map { "\(language)-\($0)" } ?? language }
}
