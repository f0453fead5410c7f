import FoundationEssentials
import Synchronization

/// The driver's language as the screen last chose it (the page keeps the choice and tells the kiosk at each load
/// and change: `PUT /language?code=`), for the voice: one of the catalogs in `www/i18n`, with the region the
/// driver's profile names where it has one (`pt-BR`: Portuguese words, a Brazilian voice).
public final class KioskLanguage: Sendable {
    /// The languages there is a catalog for, by code.
    public let available: Set<String>
    public let catalogs: String
    private let current = Mutex("en")

    public init(www: String) {
        catalogs = www + "/i18n"
        let files = (try? FileManager.default.contentsOfDirectory(atPath: catalogs)) ?? []
        available = Set(files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    }

    /// The BCP 47 tag: `de`, `pt-BR`.
    public var tag: String { current.withLock { $0 } }
    /// The catalog's code: `pt` of `pt-BR`.
    public var code: String { Self.code(of: tag) }

    public static func code(of tag: String) -> String { String(tag.prefix { $0 != "-" }).lowercased() }

    /// Takes `tag` (a catalog's code, with a region of two letters or three digits) when there is a catalog for its
    /// language; false otherwise.
    public func set(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard available.contains(Self.code(of: tag)), parts.count <= 2 else { return false }
        if parts.count == 2 {
            let region = parts[1]
            guard (region.count == 2 && region.allSatisfy { $0.isASCII && $0.isLetter })
                || (region.count == 3 && region.allSatisfy { $0.isASCII && $0.isNumber })
            else { return false }
        }
        current.withLock { $0 = parts.count == 2 ? "\(Self.code(of: tag))-\(parts[1].uppercased())" : Self.code(of: tag) }
        return true
    }
}
