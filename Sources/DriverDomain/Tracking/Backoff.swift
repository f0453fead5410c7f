/// Exponential backoff with full jitter: a pure function of the attempt number and a random fraction.
///
/// | attempt | ceiling (base 1 s, cap 300 s) |
/// |---|---|
/// | 0 | 1 s |
/// | 1 | 2 s |
/// | 2 | 4 s |
/// | 5 | 32 s |
/// | 8 and later | 300 s |
///
/// The delay is `random × ceiling`, with `random` in [0, 1) (injected, so tests are deterministic).
public struct Backoff: Sendable, Equatable {
    public var base: Double
    public var cap: Double

    public init(base: Double = 1, cap: Double = 300) {
        self.base = base
        self.cap = cap
    }

    public func ceiling(attempt: Int) -> Double {
        guard attempt < 62 else { return cap }
        return min(cap, base * Double(1 << attempt))
    }

    public func delay(attempt: Int, random: Double) -> Double {
        ceiling(attempt: attempt) * min(max(random, 0), 1)
    }
}
