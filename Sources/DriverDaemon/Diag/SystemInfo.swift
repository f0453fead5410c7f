#if canImport(Glibc)
import Glibc
#endif
import DriverAPI

/// Facts about the machine for `diag.report`, read when asked.
enum SystemInfo {
    /// "Linux 6.1.0-18-amd64 x86_64".
    static func kernel() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        func field<T>(_ tuple: T) -> String {
            withUnsafeBytes(of: tuple) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return "\(field(names.sysname)) \(field(names.release)) \(field(names.machine))"
    }

    /// `PRETTY_NAME` of /etc/os-release (or /usr/lib/os-release).
    static func operatingSystem() -> String? {
        for path in ["/etc/os-release", "/usr/lib/os-release"] {
            guard let text = readSmallFile(path) else { continue }
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                return String(line.dropFirst("PRETTY_NAME=".count)).trimmingQuotes()
            }
        }
        return nil
    }

    /// The state directory's database size and its file system's free and total space.
    static func storage(stateDirectory: String, databasePath: String) -> StorageStatus {
        var databaseBytes: Int64 = 0
        for path in [databasePath, databasePath + "-wal", databasePath + "-shm"] {
            var info = stat()
            if stat(path, &info) == 0 { databaseBytes += Int64(info.st_size) }
        }
        var fs = statvfs()
        guard statvfs(stateDirectory, &fs) == 0 else {
            return StorageStatus(stateDirectory: stateDirectory, databaseBytes: databaseBytes, freeBytes: nil, totalBytes: nil)
        }
        let unit = Int64(fs.f_frsize)
        return StorageStatus(
            stateDirectory: stateDirectory, databaseBytes: databaseBytes,
            freeBytes: Int64(fs.f_bavail) * unit, totalBytes: Int64(fs.f_blocks) * unit)
    }

    /// A text file of at most 1 MiB, or nil.
    static func readSmallFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while bytes.count < 1 << 20 {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingQuotes() -> String {
        var text = Substring(self)
        while let first = text.first, first == "\"" || first == "'" { text = text.dropFirst() }
        while let last = text.last, last == "\"" || last == "'" { text = text.dropLast() }
        return String(text)
    }
}
