/// A text frame the client sends on `/api/v1/rider/ws`: a location batch, or `hello` with the last push id it
/// has seen (the backend then sends every later push, in id order: the missed ones, then new ones as they come).
public enum WSClientMessage: Codable, Sendable, Equatable {
    case locations(LocationBatch)
    case hello(lastPushId: Int)

    private enum CodingKeys: String, CodingKey { case type, batch, lastPushId }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "locations": self = .locations(try container.decode(LocationBatch.self, forKey: .batch))
        case "hello": self = .hello(lastPushId: try container.decode(Int.self, forKey: .lastPushId))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown message type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .locations(let batch):
            try container.encode("locations", forKey: .type)
            try container.encode(batch, forKey: .batch)
        case .hello(let lastPushId):
            try container.encode("hello", forKey: .type)
            try container.encode(lastPushId, forKey: .lastPushId)
        }
    }
}

/// A text frame the backend sends on `/api/v1/rider/ws`.
public enum WSServerMessage: Codable, Sendable, Equatable {
    case ack(BatchAck)
    case push(Push)
    /// A frame the backend could not take (the connection stays open).
    case error(BackendErrorBody.Detail)

    private enum CodingKeys: String, CodingKey { case type, ack, push, error }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "ack": self = .ack(try container.decode(BatchAck.self, forKey: .ack))
        case "push": self = .push(try container.decode(Push.self, forKey: .push))
        case "error": self = .error(try container.decode(BackendErrorBody.Detail.self, forKey: .error))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown message type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .ack(let ack):
            try container.encode("ack", forKey: .type)
            try container.encode(ack, forKey: .ack)
        case .push(let push):
            try container.encode("push", forKey: .type)
            try container.encode(push, forKey: .push)
        case .error(let detail):
            try container.encode("error", forKey: .type)
            try container.encode(detail, forKey: .error)
        }
    }
}
