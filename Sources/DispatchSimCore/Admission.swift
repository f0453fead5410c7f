/// How much the reference backend takes (`PUT /sim/admission`, `--admit-*` flags): new connections and requests a
/// second, and how it says "not now" to the rest. Every field is optional in a body; nil limits take everything.
public struct AdmissionLimits: Codable, Sendable, Equatable {
    /// New connections taken in each second of the backend's clock; nil: no limit.
    public var connectionsPerSecond: Double?
    /// Requests taken in each second, on any connection; nil: no limit.
    public var requestsPerSecond: Double?
    /// The answer to what is not taken: 429 or 503.
    public var status: Int
    /// The `Retry-After` sent with it, in seconds; nil: the backend's own, the time it needs to take everyone it
    /// has refused so far at its rate (each refusal books the next free slot), so a refused fleet comes back
    /// spread over the time it takes to admit it.
    public var retryAfterSeconds: Int?

    public init(connectionsPerSecond: Double? = nil, requestsPerSecond: Double? = nil, status: Int = 429, retryAfterSeconds: Int? = nil) {
        self.connectionsPerSecond = connectionsPerSecond
        self.requestsPerSecond = requestsPerSecond
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static let unlimited = AdmissionLimits()

    private enum CodingKeys: String, CodingKey { case connectionsPerSecond, requestsPerSecond, status, retryAfterSeconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            connectionsPerSecond: try c.decodeIfPresent(Double.self, forKey: .connectionsPerSecond),
            requestsPerSecond: try c.decodeIfPresent(Double.self, forKey: .requestsPerSecond),
            status: try c.decodeIfPresent(Int.self, forKey: .status) ?? 429,
            retryAfterSeconds: try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds))
    }

    public func problems() -> [String] {
        var problems: [String] = []
        for (name, rate) in [("connectionsPerSecond", connectionsPerSecond), ("requestsPerSecond", requestsPerSecond)] {
            if let rate, !(rate > 0 && rate <= 1_000_000) { problems.append("\(name) must be above 0 and at most 1000000") }
        }
        if status != 429 && status != 503 { problems.append("status must be 429 or 503") }
        if let retryAfterSeconds, !(0...86_400).contains(retryAfterSeconds) { problems.append("retryAfterSeconds must be between 0 and 86400") }
        return problems
    }
}

/// What the backend did in one second (`GET /sim/admission`).
public struct AdmissionSecond: Codable, Sendable, Equatable {
    /// Unix second (dispatch-sim's clock).
    public var second: Int
    /// Requests that opened a new connection, and of those the ones taken.
    public var connectionAttempts = 0
    public var connectionsAccepted = 0
    /// Every request, and those refused (for either limit, or the outage).
    public var requests = 0
    public var refused = 0

    public init(second: Int) { self.second = second }
}

/// The admission desk, pure: at most so many new connections and requests in each second of its clock (a fixed
/// window: what it counts is what it promised), an outage switch, and counts a second. The HTTP layer asks `admit` for each API request, with whether it opened a new connection.
public struct AdmissionDesk: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        case accept
        /// Answer `status` with `Retry-After: retryAfter` (seconds) and close the connection.
        case refuse(status: Int, retryAfter: Int)
    }

    /// The seconds of counts kept.
    public static let keptSeconds = 3600
    /// The longest `Retry-After` the backend's own rule gives.
    public static let longestRetryAfter = 600.0

    public private(set) var limits: AdmissionLimits
    /// Until when every request is answered 503 (an outage that still answers, as a front door in maintenance
    /// does); its `Retry-After` is the time left.
    public private(set) var outageUntil: Double?
    /// The next free admission slot booked for a refused connection (the backend's own Retry-After).
    private var nextSlot = -Double.infinity
    public private(set) var seconds: [AdmissionSecond] = []

    public init(limits: AdmissionLimits = .unlimited) { self.limits = limits }

    public mutating func set(_ limits: AdmissionLimits) {
        self.limits = limits
        nextSlot = -.infinity
    }

    /// Every request is answered 503 with the time left as `Retry-After` until `now + seconds` (0 ends it).
    public mutating func outage(forSeconds seconds: Double, now: Double) {
        outageUntil = seconds > 0 ? now + seconds : nil
    }

    public mutating func admit(newConnection: Bool, now: Double) -> Verdict {
        var count = counts(at: now)
        defer { record(count) }
        count.requests += 1
        if newConnection { count.connectionAttempts += 1 }
        if let outageUntil, now < outageUntil {
            count.refused += 1
            return .refuse(status: 503, retryAfter: Int((outageUntil - now).rounded(.up)))
        }
        let connectionTaken = !newConnection || limits.connectionsPerSecond.map { Double(count.connectionsAccepted) + 1 <= $0 } ?? true
        let requestTaken = limits.requestsPerSecond.map { Double(count.requests - count.refused) <= $0 } ?? true
        guard connectionTaken, requestTaken else {
            count.refused += 1
            let rate = (connectionTaken ? limits.requestsPerSecond : limits.connectionsPerSecond) ?? 1
            return .refuse(status: limits.status, retryAfter: limits.retryAfterSeconds ?? bookSlot(rate: rate, now: now))
        }
        if newConnection { count.connectionsAccepted += 1 }
        return .accept
    }

    /// A new connection closed unanswered (the backend dark): counted as an attempt refused.
    public mutating func refusedUnanswered(now: Double) {
        var count = counts(at: now)
        count.connectionAttempts += 1
        count.refused += 1
        record(count)
    }

    /// The busiest second so far: new connection attempts, and requests.
    public var peak: (connectionAttempts: Int, requests: Int) {
        (seconds.map(\.connectionAttempts).max() ?? 0, seconds.map(\.requests).max() ?? 0)
    }

    /// Books the next free slot at `rate` a second: the wait until it, whole seconds, at least 1.
    private mutating func bookSlot(rate: Double, now: Double) -> Int {
        nextSlot = min(max(nextSlot, now) + 1 / rate, now + Self.longestRetryAfter)
        return max(1, Int((nextSlot - now).rounded(.up)))
    }

    private func counts(at now: Double) -> AdmissionSecond {
        let second = Int(now.rounded(.down))
        if let last = seconds.last, last.second == second { return last }
        return AdmissionSecond(second: second)
    }

    private mutating func record(_ count: AdmissionSecond) {
        if let last = seconds.last, last.second == count.second {
            seconds[seconds.count - 1] = count
        } else {
            seconds.append(count)
            if seconds.count > Self.keptSeconds { seconds.removeFirst(seconds.count - Self.keptSeconds) }
        }
    }
}
