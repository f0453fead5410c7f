import DriverAPI
/// Who may open the bridge: a page that knows the token (written 0600 for the kiosk's browser, passed in its
/// URL) and comes from the kiosk's own origin, so that neither another local user nor a web page in some
/// browser on the unit can drive the driver's screen.
public struct KioskAccess: Sendable {
    public let token: String
    /// `http://127.0.0.1:8080` and the other loopback spellings of the kiosk's own address.
    public let origins: Set<String>

    public init(token: String, port: Int) {
        self.token = token
        origins = ["http://127.0.0.1:\(port)", "http://localhost:\(port)", "http://[::1]:\(port)"]
    }

    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        case noToken, wrongToken, foreignOrigin(String?)
        public var description: String {
            switch self {
            case .noToken: "the kiosk token is missing"
            case .wrongToken: "the kiosk token is wrong"
            case .foreignOrigin(let origin?): "origin \(origin) is not the kiosk's"
            case .foreignOrigin(nil): "no Origin header: only the kiosk's own page may connect"
            }
        }
    }

    public func check(token offered: String?, origin: String?) -> Refusal? {
        guard let origin, origins.contains(origin) else { return .foreignOrigin(origin) }
        guard let offered, !offered.isEmpty else { return .noToken }
        return Self.constantTimeEqual(Array(offered.utf8), Array(token.utf8)) ? nil : .wrongToken
    }

    /// The comparison takes as long whatever prefix matches.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// 32 random bytes, hex (the system generator: the kernel's getrandom on Linux).
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return TextFormat.hex(bytes)
    }

    /// The query parameter `token` of a request URI.
    public static func token(inQuery uri: String) -> String? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.first == "token" { return parts.count == 2 ? String(parts[1]) : "" }
        }
        return nil
    }
}
