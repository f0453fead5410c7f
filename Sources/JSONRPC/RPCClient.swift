#if canImport(Glibc)
import Glibc
#endif
import DriverAPI

/// A small blocking JSON-RPC client for front ends: one connection, one request at a time, no threads.
///
/// Blocking on purpose: a CLI makes one call and exits, and this starts in microseconds.
public final class RPCClient {
    public enum Failure: Error, CustomStringConvertible {
        case connect(UnixSocketConnector.Failure)
        case closed
        case timedOut
        case io(errno: Int32)
        case malformedReply(String)
        /// The daemon answered with a JSON-RPC error.
        case server(APIError)

        public var description: String {
            switch self {
            case .connect(let failure): failure.description
            case .closed: "driverd closed the connection"
            case .timedOut: "driverd did not answer in time"
            case .io(let code): "socket error: \(String(cString: strerror(code)))"
            case .malformedReply(let detail): "malformed reply from driverd: \(detail)"
            case .server(let error): error.message
            }
        }
    }

    public let socketPath: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// What each `recv` fills, allocated once: a fresh zeroed 64 KiB per read cost more than the read.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private var nextID = 1
    /// Notifications that arrived while a call waited for its reply; `readReply` hands them out first.
    private var notifications: [JSONValue] = []

    /// - Parameter timeout: how long to wait for each reply (nil: forever, for subscriptions).
    public init(socketPath: String, timeout: Duration? = .seconds(10)) throws(Failure) {
        self.socketPath = socketPath
        do {
            fd = try UnixSocketConnector.connect(socketPath)
        } catch {
            throw .connect(error)
        }
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close(fd) }

    /// Calls one method and decodes its result.
    public func call<Params, Result>(_ method: Method<Params, Result>, _ params: Params) throws(Failure) -> Result {
        let id = JSONValue.number(String(nextID))
        nextID += 1
        let request = try Self.request(method, params, id: id)
        try writeLine(request)
        let reply = try readAnswer()
        return try Self.result(of: reply, for: method, id: id)
    }

    /// Calls two methods in one batch (one round trip) and decodes both results.
    public func call<P1, R1, P2, R2>(
        _ first: Method<P1, R1>, _ firstParams: P1, _ second: Method<P2, R2>, _ secondParams: P2
    ) throws(Failure) -> (R1, R2) {
        let ids: (JSONValue, JSONValue) = (.number(String(nextID)), .number(String(nextID + 1)))
        nextID += 2
        try writeLine(Envelope.batch([
            try Self.request(first, firstParams, id: ids.0), try Self.request(second, secondParams, id: ids.1),
        ]))
        guard case .array(let replies) = try readAnswer() else { throw .malformedReply("expected a batch reply") }
        func reply(_ id: JSONValue) throws(Failure) -> JSONValue {
            guard let found = replies.first(where: { $0["id"] == id }) else {
                throw .malformedReply("no reply for id \(JSONWriter.string(id))")
            }
            return found
        }
        return (try Self.result(of: try reply(ids.0), for: first, id: ids.0),
                try Self.result(of: try reply(ids.1), for: second, id: ids.1))
    }

    /// Sends raw bytes plus a newline (for tests and tools that speak the protocol by hand).
    public func writeLine(_ bytes: [UInt8]) throws(Failure) {
        var payload = bytes
        payload.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < payload.count {
            let written = payload[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET ? .closed : .io(errno: errno)
            }
            offset += written
        }
    }

    /// Reads one line (without its newline).
    public func readLine() throws(Failure) -> [UInt8] {
        var scanned = 0
        while true {
            if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            scanned = buffer.count
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { throw .closed }
            if count < 0 {
                if errno == EINTR { continue }
                throw errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .io(errno: errno)
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next reply to a request (an object with an id, or a batch), keeping notifications for later.
    private func readAnswer() throws(Failure) -> JSONValue {
        while true {
            let message = try readMessage()
            if case .object = message, message["id"] == nil, message["method"] != nil {
                notifications.append(message)
                continue
            }
            return message
        }
    }

    /// The next message: a notification kept while a call waited, else the next line parsed.
    public func readReply() throws(Failure) -> JSONValue {
        if !notifications.isEmpty { return notifications.removeFirst() }
        return try readMessage()
    }

    private func readMessage() throws(Failure) -> JSONValue {
        let line = try readLine()
        do {
            return try JSONParser.parse(line)
        } catch {
            throw .malformedReply("\(error)")
        }
    }

    static func request<P, R>(_ method: Method<P, R>, _ params: P, id: JSONValue) throws(Failure) -> [UInt8] {
        let encoded: [UInt8]?
        do {
            encoded = P.self == NoParams.self ? nil : try Codec.encode(params)
        } catch {
            throw .malformedReply("cannot encode params: \(error)")
        }
        return Envelope.request(method: method.name, params: encoded, id: id)
    }

    static func result<P, R>(of reply: JSONValue, for method: Method<P, R>, id: JSONValue) throws(Failure) -> R {
        guard reply["id"] == id else { throw .malformedReply("reply id does not match the request") }
        if let error = reply["error"] {
            guard case .number(let codeText) = error["code"], let code = Int(codeText),
                  case .string(let message) = error["message"]
            else { throw .malformedReply("error object without code and message") }
            throw .server(APIError(APIError.Kind(wireCode: code), message, data: error["data"]))
        }
        guard let result = reply["result"] else { throw .malformedReply("neither result nor error") }
        do {
            return try Codec.decode(R.self, from: result)
        } catch {
            throw .malformedReply("\(method.name) result: \(error)")
        }
    }
}
