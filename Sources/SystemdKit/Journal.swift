#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// Structured entries for journald over its native protocol (`sd_journal_sendv`).
public enum Journal {
    /// Sends one entry. Field names must be upper case (`MESSAGE`, `PRIORITY`, `MESSAGE_ID`, `DRIVERD_...`).
    /// Without journald this silently does nothing (libsystemd's behaviour).
    public static func send(_ fields: [(name: String, value: String)]) throws(SystemdError) {
        // One buffer for every "NAME=value", so all the iovecs point into memory that lives for the call.
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = storage.count
            storage.append(contentsOf: field.name.utf8)
            storage.append(UInt8(ascii: "="))
            storage.append(contentsOf: field.value.utf8)
            ranges.append(start..<storage.count)
        }
        let result = storage.withUnsafeMutableBytes { raw in
            var vectors = ranges.map { iovec(iov_base: raw.baseAddress! + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
        _ = try SystemdError.check("sd_journal_sendv", result)
    }

    /// True when stderr is a stream to journald (systemd sets `JOURNAL_STREAM` to its device:inode).
    public static var stderrIsJournalStream: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return value == "\(info.st_dev):\(info.st_ino)"
    }
}
