/// An error of the local API, as a handler throws it and as a client receives it.
///
/// A public struct over a private code enum, so that new kinds can be added without breaking callers. The
/// wire numbers live here, in the contract; the transport turns any Swift error into a wire error in one
/// place (`JSONRPC.WireError`).
public struct APIError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// Every error the daemon sends, by its number on the wire: the one declaration of the codes (docs/API.md's
        /// table is checked against it). Spec errors are negative; application errors are in 1000...1999.
        private enum Code: Int, CaseIterable, Sendable {
            case parseError = -32700, invalidRequest = -32600, methodNotFound = -32601, invalidParams = -32602
            case internalError = -32603
            case permissionDenied = 1001, unavailable = 1002, actionRefused = 1003, notFound = 1004, proofRejected = 1005
            case drivingGate = 1006, outsideGeofence = 1007, notSaved = 1008

            var description: String {
                switch self {
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
                case .notSaved: "not saved"
                }
            }
        }
        /// The wire number; `code` is nil for a number this version does not know (a newer daemon's).
        public let wireCode: Int
        private var code: Code? { Code(rawValue: wireCode) }

        /// The text is not JSON.
        public static let parseError = Kind(.parseError)
        /// The JSON is not a valid JSON-RPC 2.0 request, or the line is too long.
        public static let invalidRequest = Kind(.invalidRequest)
        public static let methodNotFound = Kind(.methodNotFound)
        public static let invalidParams = Kind(.invalidParams)
        public static let internalError = Kind(.internalError)
        /// A mutating method called by a peer that is neither root nor in the configured group.
        public static let permissionDenied = Kind(.permissionDenied)
        /// The feature exists but cannot answer now (no fix yet, store not open, ...).
        public static let unavailable = Kind(.unavailable)
        /// A driver action the task's state does not allow; `data` holds `current` and `allowed`.
        public static let actionRefused = Kind(.actionRefused)
        /// No such task or stop (or no active task when none was named).
        public static let notFound = Kind(.notFound)
        /// The backend refused a proof of delivery (a wrong OTP: `data.attemptsLeft`); capture it again.
        public static let proofRejected = Kind(.proofRejected)
        /// The vehicle moves (or its speed is unknown): the action needs the driver's attention.
        public static let drivingGate = Kind(.drivingGate)
        /// A delivery or failure farther from the stop than its geofence's exit border, without an
        /// `outsideReason`; `data` holds `distanceMeters`, `exitBorderMeters` and the allowed `reasons`.
        public static let outsideGeofence = Kind(.outsideGeofence)

        /// The unit's storage cannot hold the change (full, read-only or failing): nothing was changed, and nothing
        /// will be retried. `data` holds `reason` (`full`, `read-only`, `failing`) and `freeBytes` (API 1.18).
        public static let notSaved = Kind(.notSaved)

        /// Every kind this version knows, in the order of their numbers' declaration.
        public static let all: [Kind] = Code.allCases.map(Kind.init)

        /// Any number: one this version does not know keeps its number and reads "error N".
        public init(wireCode: Int) { self.wireCode = wireCode }

        private init(_ code: Code) { wireCode = code.rawValue }

        public var description: String { code?.description ?? "error \(wireCode)" }

        /// Its name in this declaration (`proofRejected`): front ends written in other languages (the kiosk's page)
        /// get the numbers by these names (`kiosk.describe`) instead of copying them. Nil for an unknown number.
        public var name: String? { code.map { String(describing: $0) } }
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
