import Foundation

/// Files the daemon must not lose half of (spooled photos, diagnostic bundles).
enum DurableFile {
    /// Written to a temporary name, flushed, then renamed: a crash leaves the old state or the whole file. The
    /// directory is made (0700) if needed; the file is 0600.
    static func write(_ bytes: Data, to target: String) throws {
        let directory = (target as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = target + ".partial"
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
        if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
        try FileManager.default.moveItem(atPath: temporary, toPath: target)
    }
}
