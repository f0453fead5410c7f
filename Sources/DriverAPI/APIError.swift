/// An error of the local API, as a handler throws it and as a client receives it.
///
/// A public struct over a private code enum, so that new kinds can be added without breaking callers. The
/// wire numbers live here, in the contract; the transport turns any Swift error into a wire error in one
/// place (`JSONRPC.WireError`).
public struct APIError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case parseError, invalidRequest, methodNotFound, invalidParams, internalError
            case permissionDenied, unavailable, actionRefused, notFound, proofRejected, drivingGate, outsideGeofence
            case other(Int)
        }
        private let code: Code

        /// The text is not JSON.
        public static let parseError = Kind(code: .parseError)
        /// The JSON is not a valid JSON-RPC 2.0 request, or the line is too long.
        public static let invalidRequest = Kind(code: .invalidRequest)
        public static let methodNotFound = Kind(code: .methodNotFound)
        public static let invalidParams = Kind(code: .invalidParams)
        public static let internalError = Kind(code: .internalError)
        /// A mutating method called by a peer that is neither root nor in the configured group.
        public static let permissionDenied = Kind(code: .permissionDenied)
        /// The feature exists but cannot answer now (no fix yet, store not open, ...).
        public static let unavailable = Kind(code: .unavailable)
        /// A driver action the task's state does not allow; `data` holds `current` and `allowed`.
        public static let actionRefused = Kind(code: .actionRefused)
        /// No such task or stop (or no active task when none was named).
        public static let notFound = Kind(code: .notFound)
        /// The backend refused a proof of delivery (a wrong OTP: `data.attemptsLeft`); capture it again.
        public static let proofRejected = Kind(code: .proofRejected)
        /// The vehicle moves (or its speed is unknown): the action needs the driver's attention.
        public static let drivingGate = Kind(code: .drivingGate)
        /// A delivery or failure farther from the stop than its geofence's exit border, without an
        /// `outsideReason`; `data` holds `distanceMeters`, `exitBorderMeters` and the allowed `reasons`.
        public static let outsideGeofence = Kind(code: .outsideGeofence)

        /// The number on the wire. Spec errors are negative; application errors are in 1000...1999.
        public var wireCode: Int {
            switch code {
            case .parseError: -32700
            case .invalidRequest: -32600
            case .methodNotFound: -32601
            case .invalidParams: -32602
            case .internalError: -32603
            case .permissionDenied: 1001
            case .unavailable: 1002
            case .actionRefused: 1003
            case .notFound: 1004
            case .proofRejected: 1005
            case .drivingGate: 1006
            case .outsideGeofence: 1007
            case .other(let value): value
            }
        }

        public init(wireCode: Int) {
            let known: [Kind] = [
                .parseError, .invalidRequest, .methodNotFound, .invalidParams, .internalError,
                .permissionDenied, .unavailable, .actionRefused, .notFound, .proofRejected, .drivingGate, .outsideGeofence,
            ]
            self = known.first { $0.wireCode == wireCode } ?? Kind(code: .other(wireCode))
        }

        private init(code: Code) { self.code = code }

        public var description: String {
            switch code {
            case .parseError: "parse error"
            case .invalidRequest: "invalid request"
            case .methodNotFound: "method not found"
            case .invalidParams: "invalid params"
            case .internalError: "internal error"
            case .permissionDenied: "permission denied"
            case .unavailable: "unavailable"
            case .actionRefused: "action refused"
            case .notFound: "not found"
            case .proofRejected: "proof rejected"
            case .drivingGate: "pull over to complete"
            case .outsideGeofence: "away from the stop"
            case .other(let value): "error \(value)"
            }
        }
    }

    public let kind: Kind
    public let message: String
    /// Structured detail for programs (for example the allowed values of a parameter).
    public let data: JSONValue?

    public init(_ kind: Kind, _ message: String, data: JSONValue? = nil) {
        self.kind = kind
        self.message = message
        self.data = data
    }

    public static func invalidParams(_ message: String) -> APIError { APIError(.invalidParams, message) }
    public static func unavailable(_ message: String) -> APIError { APIError(.unavailable, message) }

    public var description: String { "\(message) (\(kind.wireCode))" }
}
