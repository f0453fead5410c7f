/// How many early resends a lossy link may cost: a token bucket as gRPC's retry throttling and AWS's retry quota keep
/// one. A resend spends a token, each success earns back `earnedPerSuccess`, so over any long window resends stay
/// below that share of the successes (Finagle's 20 % budget) plus the bucket's size. Random loss is resent at once;
/// loss that comes faster than successes refill the bucket is an outage, and waits as one.
public struct RetryBudget: Sendable, Equatable {
    public let capacity: Double
    public let earnedPerSuccess: Double
    public private(set) var tokens: Double

    public init(capacity: Double = 5, earnedPerSuccess: Double = 0.2) {
        self.capacity = max(1, capacity)
        self.earnedPerSuccess = max(0, earnedPerSuccess)
        tokens = self.capacity
    }

    /// Whether a resend may go now.
    public var canSpend: Bool { tokens >= 1 }

    /// Whether a resend may go and leave `reserve` tokens for resends that matter more.
    public func canSpend(keeping reserve: Double) -> Bool { tokens >= 1 + reserve }

    /// Takes a token for a resend; false when the budget is spent.
    public mutating func spend() -> Bool {
        guard canSpend else { return false }
        tokens -= 1
        return true
    }

    public mutating func earn() { tokens = min(capacity, tokens + earnedPerSuccess) }
}
