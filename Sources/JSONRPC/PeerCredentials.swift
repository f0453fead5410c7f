#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a Unix-socket connection (`SO_PEERCRED`, plus the supplementary groups of that
/// process, which `SO_PEERCRED` does not carry).
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var supplementaryGroups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, supplementaryGroups: [UInt32]) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    /// Reads the `Groups:` line of `/proc/PID/status`; empty when the process is gone or unreadable.
    public static func supplementaryGroups(ofProcess pid: Int32) -> [UInt32] {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return [] }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            guard let line else { break }
            let text = String(cString: line)
            if text.hasPrefix("Groups:") {
                return text.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
                    .compactMap { UInt32($0) }
            }
        }
        return []
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}

/// Who may call mutating methods: root, the daemon's own user, and members of one group.
public struct PeerAccessPolicy: Sendable {
    public let groupName: String
    /// nil when the group does not exist on this system: then only root and the daemon's user may mutate.
    public let groupID: UInt32?
    public let daemonUID: UInt32

    public init(groupName: String, groupID: UInt32?, daemonUID: UInt32) {
        self.groupName = groupName
        self.groupID = groupID
        self.daemonUID = daemonUID
    }

    /// Looks the group up in the system's group database.
    public static func resolving(groupName: String) -> PeerAccessPolicy {
        let gid = getgrnam(groupName).map { $0.pointee.gr_gid }
        return PeerAccessPolicy(groupName: groupName, groupID: gid, daemonUID: geteuid())
    }

    public func mayMutate(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let groupID else { return false }
        // Supplementary gid 0 cannot be told from padding (see RPCServer), so group 0 counts only as primary.
        return peer.gid == groupID || (groupID != 0 && peer.supplementaryGroups.contains(groupID))
    }
}
