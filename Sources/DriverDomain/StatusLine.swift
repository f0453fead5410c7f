import DriverAPI

/// The one-line summary systemd shows in `systemctl status` (`STATUS=`), built from the daemon's counters.
public struct StatusLine: Sendable, Equatable {
    public var clients: Int
    public var link: String
    public var motion: String
    public var samplingHz: Double
    public var pings: Int

    public init(clients: Int, link: String, motion: String, samplingHz: Double, pings: Int) {
        self.clients = clients
        self.link = link
        self.motion = motion
        self.samplingHz = samplingHz
        self.pings = pings
    }

    /// Short enough to read in one glance: gps link, mode and rate, pings, clients.
    public var text: String {
        "gps \(link), \(motion) at \(TextFormat.rate(samplingHz)); \(pings) ping\(pings == 1 ? "" : "s") recorded; "
            + "\(clients) client\(clients == 1 ? "" : "s")"
    }
}
