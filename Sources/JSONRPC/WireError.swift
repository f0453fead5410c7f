#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif
import DriverAPI

/// A JSON-RPC error object. The one place where a Swift error becomes a wire error.
public struct WireError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// Maps any error a handler throws. Unknown errors become -32603 without their detail: the detail goes to
    /// the log (the caller's job), never to a client.
    public init(_ error: any Error) {
        switch error {
        case let error as APIError:
            self.init(code: error.kind.wireCode, message: error.message, data: error.data)
        case let error as DecodingError:
            self.init(code: APIError.Kind.invalidParams.wireCode, message: "invalid params: \(Self.describe(error))")
        default:
            self.init(code: APIError.Kind.internalError.wireCode, message: "internal error")
        }
    }

    public init(_ kind: APIError.Kind, _ message: String, data: JSONValue? = nil) {
        self.init(code: kind.wireCode, message: message, data: data)
    }

    public var apiError: APIError { APIError(APIError.Kind(wireCode: code), message, data: data) }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .number(String(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// A readable one-liner for a decoding failure, naming the field.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let names = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "params" : names.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.isEmpty ? "" : " in \(path(context.codingPath))"
            return "missing '\(key.stringValue)'\(parent)"
        case .typeMismatch(let type, let context):
            return "'\(path(context.codingPath))' must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "'\(path(context.codingPath))' must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            return "'\(path(context.codingPath))': \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        default: "\(type)".contains("Array") ? "an array" : "an object"
        }
    }
}
