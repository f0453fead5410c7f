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

    /// The languages the screen offers (`GET /languages`): every catalog's code, English first, then by code.
    public var codes: [String] { available.sorted { ($0 == "en" ? "" : $0) < ($1 == "en" ? "" : $1) } }

    /// The texts for `tag` (`GET /catalog`, and the voice's): its region's catalog where there is one (`pt-BR.json`,
    /// the words Brazil says differently) over its language's, over English's, so a missing text is English, never a
    /// key. The one place catalogs are layered. Empty when none can be read (a package without its catalogs is
    /// broken: the voice says so in the journal, the page shows its keys).
    public static func catalog(_ tag: LanguageTag, in directory: String) -> [String: String] {
        // A language or region without a catalog is expected (English fills in); the shipped catalogs are each
        // checked as JSON by Tests/kiosk/test_i18n.py.
        func read(_ code: String) -> [String: String] {
            guard let data = FileManager.default.contents(atPath: "\(directory)/\(code).json"),
                  let catalog = try? JSONDecoder().decode([String: String].self, from: data)
            else { return [:] }
            return catalog
        }
        var texts = read("en")
        if tag.language != "en" { texts.merge(read(tag.language)) { $1 } }
        if tag.region != nil { texts.merge(read(tag.description)) { $1 } }
        return texts
    }

    public func catalog(_ tag: LanguageTag) -> [String: String] { Self.catalog(tag, in: catalogs) }

    /// Takes `text` when it is a language tag (a region of two letters or three digits at most) of a language
    /// there is a catalog for; false otherwise.
    public func set(_ text: String) -> Bool {
        guard let tag = LanguageTag(text), available.contains(tag.language) else { return false }
        current.withLock { $0 = tag }
        return true
    }
}
