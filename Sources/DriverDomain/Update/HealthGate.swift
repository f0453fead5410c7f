/// Whether a freshly installed driverd is good (pure; the installer feeds it what systemd and the socket say, once
/// a second or so). It must reach READY (the unit active), answer on its socket, reach the backend when it was
/// reachable before the install, and not restart for `healthySeconds`; then the update is committed, otherwise
/// rolled back with the reason.
public struct HealthGate: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var healthySeconds: Double
        /// From the install's start to READY and an answer on the socket. dpkg's postinst waits for the restart,
        /// so a driverd that never says READY holds the installer until systemd's start timeout (90 s) fails it:
        /// the gate is then past this limit at its first look, and says `no READY` whether systemd has started
        /// the daemon again or waits to.
        public var readyWithin: Double
        /// The backend was reachable before: the new version must reach it too.
        public var backendRequired: Bool

        public init(healthySeconds: Double, readyWithin: Double = 60, backendRequired: Bool) {
            self.healthySeconds = healthySeconds
            self.readyWithin = readyWithin
            self.backendRequired = backendRequired
        }
    }

    /// One look at the new daemon.
    public struct Probe: Sendable, Equatable {
        /// The unit is active (READY=1 reached) and its process runs.
        public var running: Bool
        /// The unit failed, waits to be restarted, or systemd counted a restart.
        public var crashed: Bool
        /// systemd's result of the unit's last run is `timeout`: its start (TimeoutStartSec) or its run (RuntimeMaxSec).
        public var timedOut: Bool
        /// systemd's result of the unit's last run is that its process ended by itself (`exit-code`, `signal`,
        /// `core-dump`). Neither this nor `timedOut` while systemd starts it again: the result reads `success` then.
        public var exited: Bool
        /// When systemd last saw the unit reach active (READY), monotonic seconds; nil for never.
        public var activeSince: Double?
        public var mainPID: Int
        /// It answered a call on its socket.
        public var answers: Bool
        public var backendOnline: Bool

        public init(
            running: Bool, crashed: Bool, timedOut: Bool = false, exited: Bool = false, activeSince: Double? = nil, mainPID: Int, answers: Bool,
            backendOnline: Bool
        ) {
            self.running = running
            self.crashed = crashed
            self.timedOut = timedOut
            self.exited = exited
            self.activeSince = activeSince
            self.mainPID = mainPID
            self.answers = answers
            self.backendOnline = backendOnline
        }
    }

    public enum Reason: String, Sendable, Equatable, CaseIterable {
        case crashAtStart = "crash at start"
        case crashLoop = "crash loop"
        case noReady = "no READY"
        case socketSilent = "no answer on its socket"
        case backendUnreachable = "backend unreachable"
    }

    public enum Action: Sendable, Equatable {
        case wait
        case commit
        case rollBack(Reason)
    }

    public let settings: Settings
    private let startedAt: Double
    /// The new driverd's main process once it answered, and since when.
    private struct Ready: Equatable {
        var pid: Int
        var at: Double
    }

    private var ready: Ready?
    private var silentSince: Double?
    private var reachedBackend = false
    private var decided: Action?

    /// `now`: when the new package's install started (monotonic seconds; dpkg's own time counts).
    public init(settings: Settings, installedAt now: Double) {
        self.settings = settings
        startedAt = now
    }

    /// Seconds a ready daemon may leave its socket unanswered (a long garbage collection is not a failure).
    public static let silenceAllowed = 30.0

    public mutating func observe(_ probe: Probe, at now: Double) -> Action {
        if let decided { return decided }
        let action = judge(probe, at: now)
        if action != .wait { decided = action }
        return action
    }

    private mutating func judge(_ probe: Probe, at now: Double) -> Action {
        guard let ready else {
            if probe.running, probe.answers, !probe.crashed {
                if probe.backendOnline { reachedBackend = true }
                self.ready = Ready(pid: probe.mainPID, at: now)
                return .wait
            }
            // Past the limit, a daemon that never answered is `no READY` even if systemd has given up on it since.
            if now - startedAt >= settings.readyWithin { return .rollBack(.noReady) }
            guard probe.crashed else { return .wait }
            // Gone before the gate saw it answer (dpkg's postinst may outlast a short life): systemd says whether it
            // reached READY since the install (then it died after its start), or timed out before it.
            if let active = probe.activeSince, active >= startedAt { return .rollBack(.crashLoop) }
            if probe.timedOut { return .rollBack(.noReady) }
            if probe.exited { return .rollBack(.crashAtStart) }
            // systemd is starting it again and has reset the last run's result: the next end tells (a start that timed
            // out, seen during the next start, was once judged a crash at the start), or the limit does.
            return .wait
        }
        if probe.crashed || !probe.running || probe.mainPID != ready.pid { return .rollBack(.crashLoop) }
        if probe.backendOnline { reachedBackend = true }
        if probe.answers {
            silentSince = nil
        } else {
            let since = silentSince ?? now
            silentSince = since
            if now - since >= Self.silenceAllowed { return .rollBack(.socketSilent) }
        }
        guard now - ready.at >= settings.healthySeconds, silentSince == nil else { return .wait }
        return settings.backendRequired && !reachedBackend ? .rollBack(.backendUnreachable) : .commit
    }
}
