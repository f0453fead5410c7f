import DriverAPI
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
    /// key. The one place catalogs are layered. A language or region without a catalog is expected (English fills
    /// in); a catalog that is there but not a JSON object of texts is a broken package, and throws.
    public static func catalog(_ tag: LanguageTag, in directory: String) throws(KioskCatalogError) -> [String: String] {
        func read(_ code: String) throws(KioskCatalogError) -> [String: String] {
            let path = "\(directory)/\(code).json"
            guard let data = FileManager.default.contents(atPath: path) else { return [:] }
            do {
                return try Codec.decode([String: String].self, from: data)
            } catch {
                throw KioskCatalogError(path: path, reason: "\(error)")
            }
        }
        var texts = try read("en")
        if tag.language != "en" { texts.merge(try read(tag.language)) { $1 } }
        if tag.region != nil { texts.merge(try read(tag.description)) { $1 } }
        return texts
    }

    public func catalog(_ tag: LanguageTag) throws(KioskCatalogError) -> [String: String] { try Self.catalog(tag, in: catalogs) }

    /// Takes `text` when it is a language tag (a region of two letters or three digits at most) of a language
    /// there is a catalog for; false otherwise.
    public func set(_ text: String) -> Bool {
        guard let tag = LanguageTag(text), available.contains(tag.language) else { return false }
        current.withLock { $0 = tag }
        return true
    }
}

/// A shipped catalog that cannot be read as texts: the package is broken.
public struct KioskCatalogError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String { "\(path) is not a catalog (a JSON object of texts): \(reason)" }
}
