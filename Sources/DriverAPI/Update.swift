/// `update.mode`: the unit installs the fleet's releases itself (`auto`), or its image is updated by Mender, RAUC
/// or SWUpdate and it only reports its version (`external`).
public enum UpdateMode: String, Codable, Sendable, Equatable, CaseIterable {
    case auto, external
}

/// `update.status` (API 1.13): the installed version, a release on its way in, the maintenance window, the last
/// outcome.
public struct UpdateStatus: Codable, Sendable, Equatable {
    public var mode: UpdateMode
    /// The package and version dpkg has installed (the daemon's own version when dpkg does not know it).
    public var package: String
    public var installedVersion: String
    public var release: ReleaseProgress?
    /// When a release may be installed, in words.
    public var window: String
    /// Bytes downloaded today, and the day's cap (`update.max_bytes_per_day`).
    public var bytesToday: Int
    public var maxBytesPerDay: Int
    public var lastOutcome: UpdateOutcome?

    public init(
        mode: UpdateMode, package: String, installedVersion: String, release: ReleaseProgress?, window: String, bytesToday: Int, maxBytesPerDay: Int,
        lastOutcome: UpdateOutcome?
    ) {
        self.mode = mode
        self.package = package
        self.installedVersion = installedVersion
        self.release = release
        self.window = window
        self.bytesToday = bytesToday
        self.maxBytesPerDay = maxBytesPerDay
        self.lastOutcome = lastOutcome
    }
}

/// A release the unit accepted, and how far it got.
public struct ReleaseProgress: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, Equatable, CaseIterable {
        /// Chunks arrive.
        case downloading
        /// Waiting: `waitingFor` says for what (an SOS or transitions to send, the day's cap, the link, disk space).
        case paused
        /// All of it arrived and matched; it waits for the maintenance window (`waitingFor`).
        case downloaded
        /// driverd-update was asked to install it.
        case installing
    }

    public var package: String
    public var version: String
    public var size: Int
    public var downloadedBytes: Int
    public var state: State
    public var waitingFor: String?

    public init(package: String, version: String, size: Int, downloadedBytes: Int, state: State, waitingFor: String?) {
        self.package = package
        self.version = version
        self.size = size
        self.downloadedBytes = downloadedBytes
        self.state = state
        self.waitingFor = waitingFor
    }
}

/// How the last release ended on this unit.
public struct UpdateOutcome: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable, Equatable, CaseIterable {
        case applied = "APPLIED", refused = "REFUSED", rolledBack = "ROLLED_BACK"
    }

    public var package: String
    public var version: String
    public var status: Status
    public var reason: String?
    /// Unix seconds.
    public var at: Double

    public init(package: String, version: String, status: Status, reason: String?, at: Double) {
        self.package = package
        self.version = version
        self.status = status
        self.reason = reason
        self.at = at
    }
}

// MARK: Methods

extension Methods {
    /// The installed version, a release on its way in, the maintenance window and the last outcome (API 1.13).
    ///
    /// driverctl: `driverctl update`.
    ///
    /// Since API 1.13. Params: none. Self-update (docs/OPERATIONS.md, "Updates from afar"). Result:
    ///
    /// - `mode`: `auto` (the unit installs the fleet's releases through driverd-update.service) or `external` (its
    ///   image is updated by Mender, RAUC or SWUpdate; it only reports its version); `package`, `installedVersion` (as
    ///   dpkg has it);
    /// - `release` (absent: none on its way): `package`, `version`, `size`, `downloadedBytes`, `state` (`downloading`,
    ///   `paused`, `downloaded`: waits for the window, `installing`: driverd-update was asked), `waitingFor` (why not
    ///   further now: an SOS or a status to send first, the day's byte cap, the link, the maintenance window);
    /// - `window`: when a release may be installed, in words; `bytesToday`, `maxBytesPerDay`;
    /// - `lastOutcome`: `{"package", "version", "status", "reason", "at"}`, `status` `APPLIED`, `REFUSED` or
    ///   `ROLLED_BACK`.
    public static let updateStatus = Method<NoParams, UpdateStatus>("update.status", mutating: false)

    /// Asks the backend for a staged release now (as its push would) and answers with `update.status` once the
    /// answer is taken; `unavailable` (1002) when the backend was not reached.
    ///
    /// driverctl: `driverctl update --check`.
    ///
    /// Since API 1.14. Params: none. Asks the backend for the release staged for this unit now, as its
    /// `UPDATE_AVAILABLE` push would (a unit that missed the push, or a technician at the van who does not want
    /// to wait for the next reconnection), and answers once the answer is taken: the result is `update.status`'s,
    /// so a release accepted shows in `release`, a refused one in `lastOutcome`. `unavailable` (1002) when no backend
    /// is configured or it was not reached (the message says which). Mutating: root or the configured group.
    public static let updateCheck = Method<NoParams, UpdateStatus>("update.check", mutating: true, since: 14)

    /// This file's methods, in `Methods.all`.
    static let update: [MethodDescriptor] = [updateStatus.descriptor, updateCheck.descriptor]
}
