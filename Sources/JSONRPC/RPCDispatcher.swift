import DriverAPI
import Logging

/// Turns one line of JSON-RPC 2.0 text into the line to answer with (nil: nothing to answer).
///
/// Transport-independent, so every rule of the specification is unit-testable without a socket.
public final class RPCDispatcher: Sendable {
    private let router: RPCRouter
    private let logger: Logger
    private let counters: RPCCounters

    public init(router: RPCRouter, counters: RPCCounters = RPCCounters(), logger: Logger) {
        self.router = router
        self.counters = counters
        self.logger = logger
    }

    /// A parsed line, or the parse-error reply it earned.
    public static func parse(line: UnsafeRawBufferPointer) -> Swift.Result<JSONValue, WireError> {
        do {
            return .success(try JSONParser.parse(line))
        } catch {
            return .failure(WireError(.parseError, "parse error: \(error)"))
        }
    }

    public func handle(line: [UInt8], connection: RPCConnection) async -> [UInt8]? {
        await handle(parsed: line.withUnsafeBytes { Self.parse(line: $0) }, connection: connection)
    }

    public func handle(parsed: Swift.Result<JSONValue, WireError>, connection: RPCConnection) async -> [UInt8]? {
        switch parsed {
        case .success(let message): return await handle(message: message, connection: connection)
        case .failure(let error): return Envelope.error(id: .null, error)
        }
    }

    public func handle(message: JSONValue, connection: RPCConnection) async -> [UInt8]? {
        switch message {
        case .array(let elements) where elements.isEmpty:
            return Envelope.error(id: .null, WireError(.invalidRequest, "invalid request: empty batch"))
        case .array(let elements):
            var replies: [[UInt8]] = []
            for element in elements {
                if let reply = await handleSingle(element, connection: connection) { replies.append(reply) }
            }
            return replies.isEmpty ? nil : Envelope.batch(replies)
        default:
            return await handleSingle(message, connection: connection)
        }
    }

    private func handleSingle(_ message: JSONValue, connection: RPCConnection) async -> [UInt8]? {
        counters.requestServed()
        let request: Request
        switch Request.validate(message) {
        case .success(let valid): request = valid
        case .failure(let invalid):
            return Envelope.error(id: invalid.id, WireError(.invalidRequest, "invalid request: \(invalid.reason)"))
        }
        let reply: Swift.Result<[UInt8], WireError>
        if let entry = router.entries[request.method] {
            if entry.isMutating && !connection.mayMutate {
                reply = .failure(WireError(
                    .permissionDenied,
                    "\(request.method) changes state: only root or members of the driver group may call it"))
            } else {
                do {
                    reply = .success(try await entry.call(request.params, connection))
                } catch {
                    let wire = WireError(error)
                    if wire.code == APIError.Kind.internalError.wireCode {
                        // The reason in the message: `diag` keeps a warning's message, not its metadata.
                        logger.error("\(request.method) failed: \(error)", metadata: ["method": "\(request.method)"])
                    }
                    reply = .failure(wire)
                }
            }
        } else {
            reply = .failure(WireError(.methodNotFound, "method not found: \(request.method)"))
        }
        // Notifications are never answered, whatever happened.
        guard let id = request.id else { return nil }
        switch reply {
        case .success(let result): return Envelope.response(id: id, result: result)
        case .failure(let error): return Envelope.error(id: id, error)
        }
    }
}

/// A request object that passed the specification's checks.
struct Request {
    let method: String
    let params: JSONValue?
    /// nil for a notification.
    let id: JSONValue?

    struct Invalid: Error {
        /// The request's id when it could be read, else null (as the specification asks).
        let id: JSONValue
        let reason: String
    }

    static func validate(_ message: JSONValue) -> Swift.Result<Request, Invalid> {
        guard case .object(let members) = message else {
            return .failure(Invalid(id: .null, reason: "a request must be a JSON object"))
        }
        var id: JSONValue? = nil
        if let rawID = members["id"] {
            switch rawID {
            case .string, .number, .null: id = rawID
            default: return .failure(Invalid(id: .null, reason: "'id' must be a string, a number or null"))
            }
        }
        let echoID = id ?? .null
        guard members["jsonrpc"] == .string("2.0") else {
            return .failure(Invalid(id: echoID, reason: "'jsonrpc' must be \"2.0\""))
        }
        guard case .string(let method) = members["method"] else {
            return .failure(Invalid(id: echoID, reason: "'method' must be a string"))
        }
        let params = members["params"]
        switch params {
        case nil, .array, .object: break
        default: return .failure(Invalid(id: echoID, reason: "'params' must be an array or an object"))
        }
        return .success(Request(method: method, params: params, id: id))
    }
}
