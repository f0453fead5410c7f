import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// The backend tokens, kept in the state directory with mode 0600 (they are the driver's credentials).
struct StoredTokens: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var driverId: String
    /// The language of the driver's profile at the backend (nil: none, or a file of an older release).
    var language: String?
    /// Unix seconds when the access token expires.
    var expiresAt: Double
    /// Unix seconds of the login these tokens come from (a refresh keeps it); nil in files of older releases.
    var loggedInAt: Double?
    /// The clocks those two stamps came from (nil in files of older releases): a stamp of an unsynchronised clock
    /// cannot be compared with another clock's reading.
    var expiresSource: TimeSource?
    var loggedInSource: TimeSource?

    /// Tokens from a login (`loggedIn` nil) or a refresh (`loggedIn`: the login, stamped again), stamped `now`.
    init(_ response: TokenResponse, now: Stamp, loggedIn: Stamp? = nil) {
        accessToken = response.accessToken
        refreshToken = response.refreshToken
        driverId = response.driverId
        language = response.language
        expiresAt = now.time + Double(response.expiresIn)
        expiresSource = now.source
        loggedInAt = (loggedIn ?? now).time
        loggedInSource = (loggedIn ?? now).source
    }

    /// The login's stamp (nil in files of older releases; their stamps count as true time).
    var loggedIn: Stamp? { loggedInAt.map { Stamp(time: $0, source: loggedInSource ?? .ntp) } }
}

enum TokenFile {
    static func path(in directory: String) -> String { directory + "/tokens.json" }

    /// The stored tokens; nil when there are none. Throws when the file cannot be read or decoded.
    static func load(from directory: String) throws -> StoredTokens? {
        do {
            return try DurableFile.contents(path(in: directory)).map { try Codec.decode(StoredTokens.self, from: $0) }
        } catch {
            throw TokenFileError("cannot read \(path(in: directory)): \(error)")
        }
    }

    /// Written whole (0600 from its creation, synced, renamed into place, the directory synced): never readable by
    /// others, never half written, and still there after a power cut.
    static func save(_ tokens: StoredTokens, in directory: String) throws {
        do {
            try DurableFile.write(Data(try Codec.encode(tokens)), to: path(in: directory))
        } catch {
            throw TokenFileError("cannot write \(path(in: directory)): \(error)", cause: error)
        }
    }

    static func remove(from directory: String) throws {
        do {
            try DurableFile.remove(path(in: directory))
        } catch {
            throw TokenFileError("cannot remove \(path(in: directory)): \(error)")
        }
    }
}

struct TokenFileError: Error, CustomStringConvertible {
    let description: String
    /// The file system's failure underneath (the store's health reads it), nil for one of the file's own.
    let cause: (any Error)?
    init(_ description: String, cause: (any Error)? = nil) {
        self.description = description
        self.cause = cause
    }
}
