/// Where the adapter is: a serial device (USB `/dev/ttyUSB0`, Bluetooth `/dev/rfcomm0`) at a baud rate, or a
/// Wi-Fi adapter's TCP port (`192.168.0.10:35000`).
public enum OBDAdapterAddress: Sendable, Equatable, CustomStringConvertible {
    case serial(path: String, baud: Int)
    case tcp(host: String, port: Int)

    /// A path (starting with `/`) or `HOST:PORT` (`[V6]:PORT`); nil when neither.
    public init?(parsing text: String, baud: Int) {
        if text.hasPrefix("/") {
            self = .serial(path: text, baud: baud)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self = .tcp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .serial(let path, _): path
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// Baud rates termios can set.
    public static let baudRates = [9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 921600, 1_000_000, 2_000_000]
}
