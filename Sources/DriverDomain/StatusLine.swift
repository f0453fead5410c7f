import DriverAPI

/// The one-line summary systemd shows in `systemctl status` (`STATUS=`), built from the daemon's counters.
public struct StatusLine: Sendable, Equatable {
    public var clients: Int
    public var link: GPSLinkState
    public var motion: Motion
    public var samplingHz: Double
    public var pings: Int
    /// The backend link and what waits for it.
    public var backend: UplinkLink
    /// Nil: the store cannot be read (the line says so).
    public var queued: Int?

    public init(
        clients: Int, link: GPSLinkState, motion: Motion, samplingHz: Double, pings: Int, backend: UplinkLink = .disabled, queued: Int? = 0
    ) {
        self.clients = clients
        self.link = link
        self.motion = motion
        self.samplingHz = samplingHz
        self.pings = pings
        self.backend = backend
        self.queued = queued
    }

    /// Short enough to read in one glance: gps link, mode and rate, pings, backend link and queue, clients.
    public var text: String {
        "gps \(link.rawValue), \(motion.rawValue) at \(TextFormat.rate(samplingHz)); \(pings) ping\(pings == 1 ? "" : "s") recorded; "
            + "backend \(backend.rawValue), \(queued.map { "\($0) queued" } ?? "queue unreadable"); \(clients) client\(clients == 1 ? "" : "s")"
    }
}
