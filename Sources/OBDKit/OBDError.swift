#if canImport(Glibc)
import Glibc
#endif

/// Why the adapter could not be used: a public struct over a private code, like the daemon's other errors.
public struct OBDError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case open(errno: Int32)
        case configure(errno: Int32)
        case connect(errno: Int32)
        case resolve(String)
        case timeout
        case closed
        case io(errno: Int32)
        case overflow
        case notAnAdapter(String)
    }

    let code: Code

    init(_ code: Code) { self.code = code }

    /// The adapter went away or stopped answering: reconnect.
    public var isLinkLoss: Bool {
        switch code {
        case .timeout, .closed, .io, .overflow: true
        default: false
        }
    }

    public var description: String {
        switch code {
        case .open(let number): "cannot open the adapter: \(Self.message(number))"
        case .configure(let number): "cannot set the serial line up: \(Self.message(number))"
        case .connect(let number): "cannot connect to the adapter: \(Self.message(number))"
        case .resolve(let host): "cannot resolve \(host)"
        case .timeout: "the adapter did not answer in time"
        case .closed: "the adapter closed the connection"
        case .io(let number): "reading the adapter failed: \(Self.message(number))"
        case .overflow: "the adapter sent a reply without end (not an ELM327?)"
        case .notAnAdapter(let reply): "not an ELM327-compatible adapter (it answered \"\(reply)\")"
        }
    }

    private static func message(_ number: Int32) -> String { String(cString: strerror(number)) }
}
