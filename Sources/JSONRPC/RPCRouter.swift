import DriverAPI

/// The table of methods a server answers, built once before serving.
public struct RPCRouter: Sendable {
    struct Entry: Sendable {
        let isMutating: Bool
        let call: @Sendable (_ params: JSONValue?, _ connection: RPCConnection) async throws -> [UInt8]
    }

    private(set) var entries: [String: Entry] = [:]

    public init() {}

    public var methodNames: [String] { entries.keys.sorted() }

    /// Registers a typed handler. Params are decoded and the result encoded here, so handlers only see
    /// Swift types.
    public mutating func register<Params, Result>(
        _ method: Method<Params, Result>,
        handler: @escaping @Sendable (Params, RPCConnection) async throws -> Result
    ) {
        precondition(entries[method.name] == nil, "\(method.name) registered twice")
        let name = method.name
        entries[name] = Entry(isMutating: method.isMutating) { params, connection in
            try Codec.encode(try await handler(try Self.decodeParams(Params.self, from: params, method: name), connection))
        }
    }

    static func decodeParams<Params: Decodable>(
        _ type: Params.Type, from params: JSONValue?, method: String
    ) throws -> Params {
        if Params.self == NoParams.self {
            switch params {
            case nil, .array([]), .object([:]): return NoParams() as! Params
            default: throw APIError.invalidParams("\(method) takes no params")
            }
        }
        switch params {
        case .object: return try Codec.decode(Params.self, from: params!)
        case nil: return try Codec.decode(Params.self, from: .object([:]))
        default: throw APIError.invalidParams("\(method) takes named params (a JSON object)")
        }
    }
}
