import FoundationEssentials

/// What the voice says in one language: the `voice.*` texts of the page's catalog for that language
/// (`www/i18n/<code>.json`, one file per language for the screen and the voice), English where a text is missing,
/// and the espeak-ng voice of the language.
public struct VoicePhrases: Sendable, Equatable {
    /// The screen's language as the kiosk knows it: `pt-BR`.
    public let tag: LanguageTag
    private let texts: [String: String]

    public init(tag: LanguageTag, texts: [String: String]) {
        self.tag = tag
        self.texts = texts
    }

    /// The `voice.*` texts of the catalogs in `directory` for `tag`, layered as the screen's (`KioskLanguage.catalog`).
    /// Empty when there is no catalog (the voice then says nothing, and the journal says so).
    public static func load(_ tag: LanguageTag, from directory: String) throws(KioskCatalogError) -> VoicePhrases {
        VoicePhrases(tag: tag, texts: try KioskLanguage.catalog(tag, in: directory).filter { $0.key.hasPrefix("voice.") })
    }

    public var isEmpty: Bool { texts.isEmpty }

    /// The text for `key` with its `{placeholders}` filled in ("" when the catalog lacks it).
    public func say(_ key: String, _ values: [String: String] = [:]) -> String {
        var text = texts[key] ?? ""
        for (name, value) in values { text = text.replacing("{\(name)}", with: value) }
        return text
    }

    /// The espeak-ng voice: the configured one for English (a regional accent, say); the region's own where espeak-ng
    /// has one (Brazilian Portuguese, Latin American Spanish, Belgian and Swiss French); the language's otherwise.
    public func voice(configured: String) -> String {
        switch (tag.language, tag.region) {
        case ("en", _): return configured
        case ("pt", "BR"): return "pt-br"
        case ("es", let region?) where region != "ES" && region != "GQ": return "es-419"
        case ("fr", "BE"): return "fr-be"
        case ("fr", "CH"): return "fr-ch"
        default: return tag.language
        }
    }
}
