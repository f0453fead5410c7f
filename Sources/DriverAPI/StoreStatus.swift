/// The state directory's storage as the daemon last found it (`agent.status`'s `store`, API 1.18): one condition,
/// decided in one place (`DriverStore.StoreHealth`) from what the file system and SQLite said, and said in the
/// same words by `driverctl status`, `diag`, the screen and the refusal of a change (`notSaved`).
public struct StoreStatus: Codable, Sendable, Equatable {
    public enum Condition: String, Codable, Sendable, CaseIterable {
        /// Writes succeed and there is room.
        case ok
        /// Writes succeed, but free space is below the warning line: old pings are thinned first.
        case nearlyFull = "nearly-full"
        /// A write failed for lack of space (or a file-size limit): changes are refused, pings wait in memory.
        case full
        /// The file system is mounted read-only (the kernel's answer to an I/O error, `errors=remount-ro`).
        case readOnly = "read-only"
        /// The disk answers writes with I/O errors.
        case failing
    }

    public var condition: Condition
    /// The state directory.
    public var path: String
    /// Free bytes for the daemon on the state directory's file system, when it could be read.
    public var freeBytes: Int64?
    /// Bytes kept back for the driver's changes (`storage.reserve_mb`), and whether they are in use: another
    /// program filled the disk and the reserve was given up so that a change could be saved.
    public var reserveBytes: Int64
    public var reserveInUse: Bool
    /// The system's own words for the last failure (`No space left on device`), nil while writes succeed.
    public var detail: String?
    /// Whether the driver's next change can be saved: yes while writable (nearly full too), and on a full disk while
    /// the reserve is still there to give; no when read-only or failing. What the screen warns the driver by.
    public var canSave: Bool

    public init(
        condition: Condition, path: String, freeBytes: Int64?, reserveBytes: Int64 = 0, reserveInUse: Bool = false, detail: String? = nil
    ) {
        self.condition = condition
        self.path = path
        self.freeBytes = freeBytes
        self.reserveBytes = reserveBytes
        self.reserveInUse = reserveInUse
        self.detail = detail
        canSave = switch condition {
        case .ok, .nearlyFull: true
        case .full: reserveBytes > 0 && !reserveInUse
        case .readOnly, .failing: false
        }
    }

    /// The condition in words, for `driverctl status`, `diag` and the journal: what is wrong and what to do.
    public var summary: String {
        let free = freeBytes.map { " (\(Self.megabytes($0)) free)" } ?? ""
        switch condition {
        case .ok: return "writable\(free)"
        case .nearlyFull:
            return "nearly full\(free): old pings are thinned first\(reserveInUse ? ", the reserve for the driver's changes is in use" : ""); free space on \(path)"
        case .full where canSave:
            return "full\(free): only the driver's next changes can be saved (the reserve); free space on \(path)"
        case .full: return "full\(free): this unit cannot save; free space on \(path)"
        case .readOnly: return "read-only: the file system of \(path) was remounted read-only after an error; fsck and remount it, or reboot"
        case .failing: return "failing: the disk answers writes with I/O errors; replace the card or call a technician"
        }
    }

    static func megabytes(_ bytes: Int64) -> String {
        bytes >= 10 << 20 ? "\(bytes >> 20) MB" : "\((Double(bytes) / 1_048_576 * 10).rounded() / 10) MB"
    }
}
