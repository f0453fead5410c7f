import Foundation
import Synchronization

/// Where photo proofs go: a directory (`--photo-dir`, files named by their SHA-256) or memory.
final class PhotoStore: Sendable {
    private let directory: URL?
    private let memory = Mutex<[String: [UInt8]]>([:])

    init(directory: URL?) throws {
        self.directory = directory
        if let directory { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
    }

    func store(_ bytes: [UInt8], sha256: String) throws {
        if let directory {
            do {
                try Data(bytes).write(to: directory.appendingPathComponent(sha256), options: .atomic)
            } catch {
                throw SimHTTPError(.internalError, "cannot store the photo: \(error.localizedDescription)")
            }
        } else {
            memory.withLock { $0[sha256] = bytes }
        }
    }

    func load(sha256: String) -> [UInt8]? {
        guard sha256.count == 64, sha256.allSatisfy(\.isHexDigit) else { return nil }
        // No such photo is the expected nil (a 404).
        if let directory { return (try? Data(contentsOf: directory.appendingPathComponent(sha256))).map { [UInt8]($0) } }
        return memory.withLock { $0[sha256] }
    }
}
