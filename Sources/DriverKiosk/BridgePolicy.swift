import DriverAPI
import FoundationEssentials
import JSONRPC

/// What the bridge does with one WebSocket frame from the page, decided without I/O.
///
/// Any local user can reach a loopback port, so the bridge must not widen access to driverd: it forwards only
/// the methods a driver's screen needs (never a path the daemon would read, a log level, a login or the
/// configuration), one request per frame, within driverd's own line limit.
public enum BridgeDecision: Equatable, Sendable {
    /// Send this line (without its newline) to driverd.
    case forward([UInt8])
    /// Answer the page with this line and send nothing to driverd.
    case reply([UInt8])
    /// Drop it: a notification (no id) that may not pass is never answered (JSON-RPC 2.0).
    case drop
    /// `kiosk.describe`: the kiosk's own answer.
    case describe(id: JSONValue)
    /// `kiosk.photo`: write the image to a file and forward `pod.photo` with its path.
    case photo(id: JSONValue, taskId: String?, image: [UInt8], fileExtension: String)
}

public struct BridgePolicy: Sendable {
    /// The driver's screen: read the route and the status, act on tasks, capture proofs, take and acknowledge
    /// pushes, start and end the shift, call for help (the methods marked `screen` in `Methods`). `pod.photo`
    /// only through `kiosk.photo` (its `path` would let a page make the daemon read any file it can).
    public static let forwardedMethods = Set(Methods.all.filter(\.forScreen).map(\.name))
    public static let describeMethod = "kiosk.describe"
    public static let photoMethod = "kiosk.photo"
    /// driverd's own line limit (`rpc.max_line_bytes`): a longer line would cost the page its connection.
    public static let maxForwardedBytes = 1 << 20
    /// A photo proof is at most 8 MiB (driverd's limit); base64 adds a third.
    public static let maxPhotoBytes = 8 << 20
    /// The WebSocket frame limit: a photo frame and its envelope.
    public static let maxFrameBytes = maxPhotoBytes / 3 * 4 + 64 * 1024

    public init() {}

    public func decide(_ frame: [UInt8]) -> BridgeDecision {
        let value: JSONValue
        do {
            value = try JSONParser.parse(frame)
        } catch {
            return .reply(Envelope.error(id: .null, WireError(code: -32700, message: "parse error: \(error)")))
        }
        guard case .object(let request) = value else {
            let what = if case .array = value { "batches are not forwarded by the kiosk: send one request per frame" } else { "not a JSON-RPC request object" }
            return .reply(Envelope.error(id: .null, WireError(code: -32600, message: what)))
        }
        let id = request["id"]
        guard case .string(let method)? = request["method"] else {
            return id == nil ? .drop : .reply(Envelope.error(id: id!, WireError(code: -32600, message: "a request needs a method")))
        }
        switch method {
        case Self.describeMethod:
            return id.map { .describe(id: $0) } ?? .drop
        case Self.photoMethod:
            guard let id else { return .drop }
            return photo(id: id, params: request["params"])
        default:
            guard Self.forwardedMethods.contains(method) else {
                guard let id else { return .drop }
                return .reply(Envelope.error(id: id, WireError(code: -32601, message: "\(method) is not available on the driver's screen")))
            }
            guard frame.count <= Self.maxForwardedBytes else {
                guard let id else { return .drop }
                return .reply(Envelope.error(id: id, WireError(code: -32600, message: "request of \(frame.count) bytes: the limit is \(Self.maxForwardedBytes)")))
            }
            // Written again on one line: a page's pretty-printed JSON would otherwise split into several.
            return .forward(JSONWriter.bytes(value))
        }
    }

    /// `{"taskId": "task-1002", "image": "<base64>"}`: a PNG (the signature pad) or a JPEG (the camera).
    private func photo(id: JSONValue, params: JSONValue?) -> BridgeDecision {
        func refuse(_ message: String) -> BridgeDecision { .reply(Envelope.error(id: id, WireError(code: -32602, message: message))) }
        guard case .string(let encoded)? = params?["image"] else { return refuse("image: a base64 PNG or JPEG is required") }
        var taskId: String?
        switch params?["taskId"] {
        case .string(let value)?: taskId = value
        case nil, .null?: taskId = nil
        default: return refuse("taskId: a string")
        }
        guard let image = Base64.decode(encoded) else { return refuse("image: not base64") }
        guard image.count <= Self.maxPhotoBytes else { return refuse("image: \(image.count) bytes, the limit is \(Self.maxPhotoBytes)") }
        if image.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return .photo(id: id, taskId: taskId, image: image, fileExtension: "png")
        }
        if image.starts(with: [0xFF, 0xD8, 0xFF]) {
            return .photo(id: id, taskId: taskId, image: image, fileExtension: "jpg")
        }
        return refuse("image: neither a PNG nor a JPEG")
    }

    /// The `pod.photo` request for a photo the kiosk wrote.
    public static func photoRequest(id: JSONValue, taskId: String?, path: String) -> [UInt8] {
        var params: [String: JSONValue] = ["path": .string(path)]
        if let taskId { params["taskId"] = .string(taskId) }
        return Envelope.request(method: "pod.photo", params: JSONWriter.bytes(.object(params)), id: id)
    }
}

/// Standard base64 (RFC 4648), as a data URL's payload or `canvas.toDataURL` gives it; Foundation decodes it,
/// the padding it insists on is added when a sender left it out.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        let padded = text.utf8.count % 4 == 0 ? text : text + String(repeating: "=", count: 4 - text.utf8.count % 4)
        return Data(base64Encoded: padded).map { [UInt8]($0) }
    }
}
