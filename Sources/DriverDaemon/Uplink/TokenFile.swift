#if canImport(Glibc)
import Glibc
#endif
import BackendContract
import FoundationEssentials

/// The backend tokens, kept in the state directory with mode 0600 (they are the driver's credentials).
struct StoredTokens: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var driverId: String
    /// Unix seconds when the access token expires.
    var expiresAt: Double
    /// Unix seconds of the login these tokens come from (a refresh keeps it); nil in files of older releases.
    var loggedInAt: Double?

    init(_ response: TokenResponse, now: Double, loggedInAt: Double? = nil) {
        accessToken = response.accessToken
        refreshToken = response.refreshToken
        driverId = response.driverId
        expiresAt = now + Double(response.expiresIn)
        self.loggedInAt = loggedInAt ?? now
    }
}

enum TokenFile {
    static func path(in directory: String) -> String { directory + "/tokens.json" }

    static func load(from directory: String) -> StoredTokens? {
        guard let data = FileManager.default.contents(atPath: path(in: directory)) else { return nil }
        return try? JSONDecoder().decode(StoredTokens.self, from: data)
    }

    /// Written to a scratch file created 0600, synced, then renamed: never readable by others, never half
    /// written.
    static func save(_ tokens: StoredTokens, in directory: String) throws {
        let data = try JSONEncoder().encode(tokens)
        let final = path(in: directory), scratch = final + ".new"
        let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TokenFileError("cannot write \(scratch): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            unlink(scratch)
            throw TokenFileError("cannot write \(scratch): \(String(cString: strerror(errno)))")
        }
        guard rename(scratch, final) == 0 else { throw TokenFileError("cannot rename \(scratch): \(String(cString: strerror(errno)))") }
    }

    static func remove(from directory: String) { unlink(path(in: directory)) }
}

struct TokenFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
