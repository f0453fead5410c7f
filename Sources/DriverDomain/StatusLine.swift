import DriverAPI

/// The one-line summary systemd shows in `systemctl status` (`STATUS=`), built from the daemon's counters.
public struct StatusLine: Sendable, Equatable {
    public var clients: Int
    public var link: String
    public var motion: String
    public var samplingHz: Double
    public var pings: Int
    /// The backend link (`online`, `backingOff`, `authRequired`, `disabled` …) and what waits for it.
    public var backend: String
    public var queued: Int

    public init(clients: Int, link: String, motion: String, samplingHz: Double, pings: Int, backend: String = "disabled", queued: Int = 0) {
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
        "gps \(link), \(motion) at \(TextFormat.rate(samplingHz)); \(pings) ping\(pings == 1 ? "" : "s") recorded; "
            + "backend \(backend), \(queued) queued; \(clients) client\(clients == 1 ? "" : "s")"
    }
}
