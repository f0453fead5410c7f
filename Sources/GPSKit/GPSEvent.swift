import DriverAPI
import DriverDomain

/// What the reader publishes.
public enum GPSEvent: Sendable, Equatable {
    case link(GPSLinkState)
    case fix(Fix)
    /// gpsd sent this many reports without a 2D/3D fix (mode < 2) since the last event: each is counted as a
    /// rejected fix.
    case noFixReports(Int)
}

/// Where gpsd listens, `HOST:PORT` (`[::1]:2947` for IPv6).
public struct GPSDEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: String

    public static let `default` = GPSDEndpoint(host: "127.0.0.1", port: "2947")

    public init(host: String, port: String) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; nil when malformed.
    public init?(parsing text: String) {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else { return nil }
        self.init(host: String(host), port: String(number))
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A libgps failure, turned into Swift in one place.
public struct GPSDError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public let detail: String

    public var description: String { "\(operation) failed (\(code)): \(detail)" }
}
