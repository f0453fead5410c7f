import FoundationEssentials
import Synchronization

/// The driver's language as the screen last chose it (the page keeps the choice and tells the kiosk at each load
/// and change: `PUT /language?code=`), for the voice. One of the catalogs in `www/i18n`.
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

    public var code: String { current.withLock { $0 } }

    /// Takes `code` when there is a catalog for it; false otherwise.
    public func set(_ code: String) -> Bool {
        guard available.contains(code) else { return false }
        current.withLock { $0 = code }
        return true
    }
}
