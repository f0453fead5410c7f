/// The one-line summary systemd shows in `systemctl status` (`STATUS=`), built from the daemon's counters.
public struct StatusLine: Sendable, Equatable {
    public var clients: Int
    public var requests: Int

    public init(clients: Int, requests: Int) {
        self.clients = clients
        self.requests = requests
    }

    /// Short enough to read in one glance; sections appear as the subsystems that feed them do.
    public var text: String {
        "rpc: \(clients) client\(clients == 1 ? "" : "s"), \(requests) request\(requests == 1 ? "" : "s") served"
    }
}
