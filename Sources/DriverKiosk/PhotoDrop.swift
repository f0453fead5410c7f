import FoundationEssentials

/// Where the kiosk puts a photo or a signature for driverd to read (`pod.photo` takes a path): its runtime
/// directory, group-readable by the `driver` group. driverd copies the file into its own spool at once, so
/// anything older than ten minutes is gone the next time.
public struct PhotoDrop: Sendable {
    public let directory: String

    public init(runtimeDirectory: String) { directory = runtimeDirectory + "/photos" }

    public func write(_ image: [UInt8], fileExtension: String) throws -> String {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        removeOld(manager)
        let path = "\(directory)/\(UUID().uuidString.lowercased()).\(fileExtension)"
        guard manager.createFile(atPath: path, contents: Data(image), attributes: [.posixPermissions: 0o640]) else {
            throw PhotoDropError("cannot write \(path)")
        }
        return path
    }

    /// Housekeeping of a scratch directory: a photo that cannot be listed or removed now is tried at the next drop
    /// (each try? is that expected "not now").
    private func removeOld(_ manager: FileManager) {
        let cutoff = Date().addingTimeInterval(-600)
        for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = "\(directory)/\(name)"
            if let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                try? manager.removeItem(atPath: path)
            }
        }
    }
}

struct PhotoDropError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
