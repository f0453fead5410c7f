/// Backoff with jitter, pure functions of a random fraction `random` in [0, 1) (injected, so tests are deterministic).
///
/// `next(after:random:)` is decorrelated jitter (AWS's "Exponential Backoff And Jitter"): each wait is drawn
/// between the base and three times the previous wait, so a fleet that failed together does not come back
/// together, and fewer retries are made than with full jitter. The cap bounds the range, not the draw: a
/// draw clamped to the cap would put every long-failing unit on the same period.
///
/// `ceiling(attempt:)` and `delay(attempt:random:)` are the plain exponential form (full jitter), for local
/// retries that no fleet shares (gpsd, the vehicle adapter, a route fetch):
///
/// | attempt | ceiling (base 1 s, cap 300 s) |
/// |---|---|
/// | 0 | 1 s |
/// | 1 | 2 s |
/// | 5 | 32 s |
/// | 8 and later | 300 s |
public struct Backoff: Sendable, Equatable {
    public var base: Double
    public var cap: Double

    public init(base: Double = 1, cap: Double = 300) {
        self.base = base
        self.cap = max(cap, base)
    }

    /// The next wait after `previous` (nil: the first failure): uniform in [base, min(cap, 3 × previous)].
    public func next(after previous: Double?, random: Double) -> Double {
        let high = min(cap, 3 * max(previous ?? base, base))
        return base + (high - base) * min(max(random, 0), 1)
    }

    /// One step back down after a success (the inverse of `next`'s step up): nil once it reaches the base.
    public func stepDown(from wait: Double?) -> Double? {
        guard let wait, wait / 3 > base else { return nil }
        return wait / 3
    }

    public func ceiling(attempt: Int) -> Double {
        guard attempt < 62 else { return cap }
        return min(cap, base * Double(1 << attempt))
    }

    public func delay(attempt: Int, random: Double) -> Double {
        ceiling(attempt: attempt) * min(max(random, 0), 1)
    }
}
