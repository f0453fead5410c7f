#if canImport(Glibc)
import Glibc
#endif

/// The kiosk's runtime directory: `token` and `url` (mode 0600, for the kiosk's browser unit, which runs as
/// the same user), and the photos handed to driverd.
public enum RuntimeFiles {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func write(token: String, url: String, in directory: String) throws(Failure) {
        if mkdir(directory, 0o750) != 0, errno != EEXIST {
            throw Failure(description: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        try writePrivate("\(directory)/token", token + "\n")
        try writePrivate("\(directory)/url", url + "\n")
    }

    /// Written to a temporary name with mode 0600 from the start, then renamed: never readable by others, never half written.
    static func writePrivate(_ path: String, _ text: String) throws(Failure) {
        let scratch = path + ".new"
        let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot write \(scratch): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, 0o600)
        close(fd)
        guard written == bytes.count, rename(scratch, path) == 0 else {
            unlink(scratch)
            throw Failure(description: "cannot write \(path)")
        }
    }
}
