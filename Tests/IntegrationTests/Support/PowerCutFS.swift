import Foundation
import Testing

/// The power-cut file system (`scripts/powercut-fs.py`) mounted over a directory of a test: what is written
/// there lives in the file system's own page cache until synced, and a `cut` drops it, as a van's ignition does
/// (a `kill -9` keeps the kernel's page cache; a power cut does not). Mounting again serves only what was durable.
final class PowerCutFS {
    let mountpoint: String
    /// The "disk": what was durable at the last cut.
    let backing: String
    private let control: String
    private let seed: Int
    private var process: Process?
    /// What each cut did (the torn write, counters).
    private(set) var cuts: [Cut] = []

    struct Cut: Decodable {
        struct Torn: Decodable {
            var inode: Int
            var offset: Int
            var length: Int
            var kept: Int
        }

        var torn: Torn?
    }

    static let script: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent("scripts/powercut-fs.py").path
    }()

    /// FUSE as root with Debian's fusepy (scripts/install-deps.sh installs fuse3 and python3-fusepy).
    static var unavailableReason: String? {
        guard geteuid() == 0 else { return "the power-cut file system needs root (FUSE mounts)" }
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else { return "no /dev/fuse" }
        guard FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/fusepy.py") else {
            return "python3-fusepy is missing (Debian package)"
        }
        return nil
    }

    /// Mounts a new, empty file system at `mountpoint` (created if needed), its disk beside it.
    init(mountpoint: String, seed: Int = 0) throws {
        if let reason = Self.unavailableReason { throw TestFailure(reason) }
        self.mountpoint = mountpoint
        backing = mountpoint + ".disk"
        control = mountpoint + ".control"
        self.seed = seed
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: backing, withIntermediateDirectories: true)
        try mount()
    }

    /// Serves what the disk holds (after a cut: what was durable).
    func mount() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, backing, mountpoint, "--control", control, "--seed", String(seed + cuts.count)]
        process.standardOutput = FileHandle.nullDevice
        let log = mountpoint + ".log"
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }  // failing, the handle below is nil and stderr is inherited
        let handle = FileHandle(forWritingAtPath: log)
        handle?.seekToEndOfFile()
        process.standardError = handle
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if isMounted { return }
            if !process.isRunning { throw TestFailure("powercut-fs exited at once (status \(process.terminationStatus))") }
            usleep(20_000)
        }
        throw TestFailure("powercut-fs did not mount \(mountpoint)")
    }

    /// Whether the mount point is a mount of its own (another device than its parent).
    var isMounted: Bool {
        var own = stat(), parent = stat()
        guard stat(mountpoint, &own) == 0, stat(mountpoint + "/..", &parent) == 0 else { return false }
        return own.st_dev != parent.st_dev
    }

    /// The power goes: everything unsynced is dropped (with `tear`, a prefix of the last unsynced write reaches the
    /// disk first). The mount is dead afterwards until `mount()`. Whoever wrote must be dead before (kill -9).
    @discardableResult
    func cut(tear: Bool) throws -> Cut {
        let reply = try Self.command(control, tear ? "cut tear" : "cut")
        process?.waitUntilExit()
        return try ended(by: reply)
    }

    /// A cut's record (its JSON line), kept; the dead mount let go.
    private func ended(by line: some StringProtocol) throws -> Cut {
        let cut = try JSONDecoder().decode(Cut.self, from: Data(line.utf8))
        cuts.append(cut)
        process = nil
        detach()
        return cut
    }

    /// The next fsync of a directory named `name` is the last thing the disk sees: the power goes right after it,
    /// before the caller hears back. `armedCut` waits for it.
    func armCut(atSyncOfDirectory name: String) throws {
        let reply = try Self.command(control, "arm \(name)")
        guard reply.contains("\"armed\": true") else { throw TestFailure("powercut-fs did not arm: \(reply)") }
    }

    /// Waits for the cut `armCut` placed; the mount is dead afterwards until `mount()`. Whoever wrote must be
    /// killed by the caller (its calls fail from the cut on).
    @discardableResult
    func armedCut(timeout: Duration = .seconds(60)) throws -> Cut {
        guard let process else { throw TestFailure("powercut-fs is not mounted") }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw TestFailure("the armed cut did not come within \(timeout)") }
            usleep(10_000)
        }
        let log = try String(contentsOfFile: backing + "/cuts.log", encoding: .utf8)
        return try ended(by: try #require(log.split(separator: "\n").last, "powercut-fs exited without logging its cut"))
    }

    /// Unmounts without a cut (the end of a test); nothing is kept but the disk.
    func unmount() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        process = nil
        detach()
    }

    private func detach() {
        // fusermount3 serialises on the mount table's lock: with several seeds cutting at once on a loaded machine,
        // it has been seen to take over 10 s (seeds 303 and 606, never alone). Bounded, not hurried.
        _ = try? runProgram("/usr/bin/fusermount3", ["-u", "-z", mountpoint], timeout: .seconds(60))
        let deadline = ContinuousClock.now + .seconds(10)
        while isMounted && ContinuousClock.now < deadline { usleep(10_000) }
    }

    deinit { unmount() }

    /// One command on the file system's control socket; its one-line answer.
    private static func command(_ path: String, _ text: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw TestFailure("cannot reach powercut-fs at \(path): \(String(cString: strerror(errno)))") }
        _ = text.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            answer += chunk[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
