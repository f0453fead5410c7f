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
        "gps \(link), \(motion) at \(Self.rate(samplingHz)); \(pings) ping\(pings == 1 ? "" : "s") recorded; "
            + "\(clients) client\(clients == 1 ? "" : "s")"
    }

    /// `1 Hz`, `0.1 Hz`, `1/60 Hz`.
    public static func rate(_ hz: Double) -> String {
        if hz >= 1 || hz == 0 { return "\(Int(hz.rounded())) Hz" }
        let period = (1 / hz).rounded()
        if hz >= 0.1 || abs(1 / period - hz) > 1e-6 {
            let tenths = (hz * 100).rounded() / 100
            return "\(tenths) Hz"
        }
        return "1/\(Int(period)) Hz"
    }
}
