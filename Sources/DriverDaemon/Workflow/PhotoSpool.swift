import BackendContract
import Crypto
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// A photo proof in the daemon's spool, as its outbox item holds it: where the copy is, its hash, and where
/// and when it was taken.
struct SpooledPhoto: Codable, Sendable, Equatable {
    var file: String
    var sha256: String
    var bytes: Int
    var contentType: String
    var lat: Double?
    var lng: Double?
    var timestamp: Double
    /// Where `timestamp` came from (nil in spool entries of releases before it was kept).
    var timeSource: TimeSource?

    /// The multipart text fields of the contract (`PhotoPart`).
    var formFields: [(String, String)] {
        var fields = [(PhotoPart.timestamp, String(timestamp)), (PhotoPart.sha256, sha256)]
        if let timeSource { fields.append((PhotoPart.timeSource, timeSource.rawValue)) }
        if let lat, let lng { fields += [(PhotoPart.lat, String(lat)), (PhotoPart.lng, String(lng))] }
        return fields
    }
}

/// Copies photos handed over by front ends into `<state>/spool`: checked (JPEG or PNG, at most the
/// backend's limit), hashed, written durably under a name of their own, so the front end's file may go.
struct PhotoSpool: Sendable {
    let directory: String
    let maxBytes: Int
    /// Hears a failed write, and words the refusal (nil: a refusal without the store's condition, in tests).
    let health: StoreHealth?

    init(stateDirectory: String, maxBytes: Int = PhotoPart.maxBytes, health: StoreHealth? = nil) {
        directory = stateDirectory + "/spool"
        self.maxBytes = maxBytes
        self.health = health
    }

    enum Kind: String {
        case jpeg = "image/jpeg", png = "image/png"
        var fileExtension: String { self == .jpeg ? "jpg" : "png" }
    }

    static func sniff(_ bytes: Data) -> Kind? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        return nil
    }

    /// Copies `path` into the spool; throws an `APIError` that says what is wrong with the file.
    func take(_ path: String, taskId: String, lat: Double?, lng: Double?, stamp: Stamp) throws -> SpooledPhoto {
        guard path.hasPrefix("/") else { throw APIError.invalidParams("path must be absolute: \(path)") }
        // stat(2), not FileManager's attributes: without Foundation's bridging (the daemon links only
        // FoundationEssentials) their value types differ from a test process's, and a size read as 0 refused every
        // photo in the package while every test passed.
        let size: Int
        do {
            guard let regular = try DurableFile.regularFileSize(path) else { throw APIError.invalidParams("\(path) is not a regular file") }
            size = regular
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.invalidParams("cannot read \(path): no such file, or the daemon may not read it")
        }
        guard size <= maxBytes else { throw APIError.invalidParams("\(path) is \(size) bytes; a photo may have at most \(maxBytes)") }
        guard size > 0 else { throw APIError.invalidParams("\(path) is empty") }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw APIError.invalidParams("cannot read \(path): the daemon may not read it")
        }
        guard let kind = Self.sniff(bytes) else { throw APIError.invalidParams("\(path) is not a JPEG or PNG image") }
        let hash = TextFormat.hex(SHA256.hash(data: bytes))
        let target = "\(directory)/\(taskId)-\(hash.prefix(16)).\(kind.fileExtension)"
        do {
            try write(bytes, to: target)
        } catch {
            throw health?.refusal("the photo", error) ?? APIError(.internalError, "the photo was not saved: \(error)")
        }
        return SpooledPhoto(file: target, sha256: hash, bytes: bytes.count, contentType: kind.rawValue, lat: lat, lng: lng, timestamp: stamp.time, timeSource: stamp.source)
    }

    private func write(_ bytes: Data, to target: String) throws { try DurableFile.write(bytes, to: target) }
}
