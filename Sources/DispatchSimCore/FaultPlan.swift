/// Faults the reference backend injects (`/sim/faults`, `--fault-*` flags), pure: the HTTP layer asks
/// `decide` for each request under `pathPrefix` with a uniform random number and does what it says.
public struct FaultPlan: Codable, Sendable, Equatable {
    /// Close the connection before handling the request (the request is lost). A rider WebSocket's frames are lost
    /// alike: the socket closes before the frame is handled.
    public var dropBeforeRate: Double
    /// Handle the request, then close the connection without an answer (the answer is lost); a WebSocket frame alike.
    public var dropAfterRate: Double
    /// Answer `errorStatus` without handling the request.
    public var errorRate: Double
    /// A 5xx, 429 (too many requests), or 409 or 422: the backend refusing what is sent under `pathPrefix` (one task's
    /// changes: the unit keeps them as dead letters).
    public var errorStatus: Int
    /// Sent as `Retry-After` with an injected 429 or 503 (delay-seconds or an HTTP-date; the answer's `Date` is
    /// dispatch-sim's clock), nil for none.
    public var retryAfter: String?
    /// Delay before handling, milliseconds.
    public var latencyMs: Int
    /// Faults left to inject; nil for no limit. Latency does not count.
    public var limit: Int?
    /// Only paths starting with this are faulted (the dispatcher API never is).
    public var pathPrefix: String

    public init(
        dropBeforeRate: Double = 0, dropAfterRate: Double = 0, errorRate: Double = 0, errorStatus: Int = 503, retryAfter: String? = nil,
        latencyMs: Int = 0, limit: Int? = nil, pathPrefix: String = "/api/"
    ) {
        self.dropBeforeRate = dropBeforeRate
        self.dropAfterRate = dropAfterRate
        self.errorRate = errorRate
        self.errorStatus = errorStatus
        self.retryAfter = retryAfter
        self.latencyMs = latencyMs
        self.limit = limit
        self.pathPrefix = pathPrefix
    }

    public static let none = FaultPlan()

    private enum CodingKeys: String, CodingKey {
        case dropBeforeRate, dropAfterRate, errorRate, errorStatus, retryAfter, latencyMs, limit, pathPrefix
    }

    /// Every field is optional in a `/sim/faults` body.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            dropBeforeRate: try c.decodeIfPresent(Double.self, forKey: .dropBeforeRate) ?? 0,
            dropAfterRate: try c.decodeIfPresent(Double.self, forKey: .dropAfterRate) ?? 0,
            errorRate: try c.decodeIfPresent(Double.self, forKey: .errorRate) ?? 0,
            errorStatus: try c.decodeIfPresent(Int.self, forKey: .errorStatus) ?? 503,
            retryAfter: try c.decodeIfPresent(String.self, forKey: .retryAfter),
            latencyMs: try c.decodeIfPresent(Int.self, forKey: .latencyMs) ?? 0,
            limit: try c.decodeIfPresent(Int.self, forKey: .limit),
            pathPrefix: try c.decodeIfPresent(String.self, forKey: .pathPrefix) ?? "/api/")
    }

    public func problems() -> [String] {
        var problems: [String] = []
        for (name, rate) in [("dropBeforeRate", dropBeforeRate), ("dropAfterRate", dropAfterRate), ("errorRate", errorRate)]
        where !(0...1).contains(rate) {
            problems.append("\(name) must be between 0 and 1")
        }
        if dropBeforeRate + dropAfterRate + errorRate > 1 { problems.append("the rates add up to more than 1") }
        if !(500...599).contains(errorStatus) && ![429, 409, 422].contains(errorStatus) { problems.append("errorStatus must be a 5xx status, 429, 409 or 422") }
        if let retryAfter, retryAfter.isEmpty || retryAfter.count > 64 { problems.append("retryAfter must be 1 to 64 characters") }
        if !(0...60_000).contains(latencyMs) { problems.append("latencyMs must be between 0 and 60000") }
        if let limit, limit < 0 { problems.append("limit must not be negative") }
        if !pathPrefix.hasPrefix("/api/") { problems.append("pathPrefix must start with /api/") }
        return problems
    }

    public enum Decision: Sendable, Equatable {
        case pass
        case dropBefore
        case dropAfter
        case error(status: Int)
    }

    /// What to do with a request to `path`; `random` is uniform in [0, 1). Uses up one of `limit`.
    public mutating func decide(path: String, random: Double) -> Decision {
        guard path.hasPrefix(pathPrefix), limit.map({ $0 > 0 }) ?? true else { return .pass }
        let decision: Decision
        if random < dropBeforeRate {
            decision = .dropBefore
        } else if random < dropBeforeRate + dropAfterRate {
            decision = .dropAfter
        } else if random < dropBeforeRate + dropAfterRate + errorRate {
            decision = .error(status: errorStatus)
        } else {
            return .pass
        }
        if let limit { self.limit = limit - 1 }
        return decision
    }

    /// The delay for a request to `path`, milliseconds.
    public func latency(path: String) -> Int { path.hasPrefix(pathPrefix) ? latencyMs : 0 }
}
