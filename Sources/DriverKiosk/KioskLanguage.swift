import FoundationEssentials
import Synchronization

/// The driver's language as the screen last chose it (the page keeps the choice and tells the kiosk at each load
/// and change: `PUT /language?code=`), for the voice: one of the catalogs in `www/i18n`, with the region the
/// driver's profile names where it has one (`pt-BR`: Portuguese words, a Brazilian voice).
public final class KioskLanguage: Sendable {
    /// The languages there is a catalog for, by code.
    public let available: Set<String>
    public let catalogs: String
    private let current = Mutex(LanguageTag("en")!)

    public init(www: String) {
        catalogs = www + "/i18n"
        // No directory: English only, as the voice says in the journal when it finds nothing to say.
        let files = (try? FileManager.default.contentsOfDirectory(atPath: catalogs)) ?? []
        available = Set(files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    }

    /// `de`, `pt-BR`.
    public var tag: LanguageTag { current.withLock { $0 } }

    /// Takes `text` when it is a language tag (a region of two letters or three digits at most) of a language
    /// there is a catalog for; false otherwise.
    public func set(_ text: String) -> Bool {
        guard let tag = LanguageTag(text), available.contains(tag.language) else { return false }
        current.withLock { $0 = tag }
        return true
    }
}
