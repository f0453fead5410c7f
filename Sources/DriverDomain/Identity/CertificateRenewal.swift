/// When a unit renews its certificate: at a random point between 50 % and 80 % of its life (SPIRE renews at half its
/// life with jitter, Azure IoT Edge at 80 %), so a fleet enrolled in one afternoon does not renew in one hour. Judged on
/// a trusted clock only: on an unsynchronised one (a unit booted in 1970, or in 2040) a certificate is never called due,
/// and the unit waits for GPS or NTP time before it judges again. Renewal proves possession of the same key, so a
/// certificate that expired while the unit was away renews as any other (the backend decides on its own clock).
public struct CertificateRenewal: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        case renewNow
        /// Nothing to do before this time (Unix seconds, trusted clock).
        case waitUntil(Double)
        /// The clock is not trusted yet: look again later.
        case waitForTrustedClock
    }

    public let notBefore: Double
    public let notAfter: Double
    /// Between 50 % and 80 % of the life, drawn once per certificate.
    public let renewAt: Double

    /// `random` in [0, 1) places the renewal in its window.
    public init(notBefore: Double, notAfter: Double, random: Double) {
        self.notBefore = notBefore
        self.notAfter = notAfter
        renewAt = notBefore + max(0, notAfter - notBefore) * (0.5 + 0.3 * min(max(random, 0), 1))
    }

    public func decide(now: Double, clockTrusted: Bool) -> Decision {
        guard clockTrusted else { return .waitForTrustedClock }
        return now >= renewAt ? .renewNow : .waitUntil(renewAt)
    }

    /// A failed renewal's backoff while the certificate in force is good: full jitter from 5 s doubling to 10 minutes
    /// (nothing is refused yet, and a fleet renewing into a backend that is away must not knock together).
    public static let backoff = Backoff(base: 5, cap: 600)
    /// Once the certificate has expired the unit can send nothing the backend takes, and its renewal is tried this
    /// often (seconds, jittered over the range): a backend's return is heard within 20 s, whatever the outage's length.
    public static let expiredRetry = 10.0...20.0

    /// Whether the certificate has expired on a trusted clock (on an untrusted one nothing is judged).
    public func hasExpired(now: Double, clockTrusted: Bool) -> Bool { Self.hasExpired(notAfter: notAfter, now: now, clockTrusted: clockTrusted) }

    /// Whether a certificate valid until `notAfter` has expired on a trusted clock (on an untrusted one nothing is judged).
    public static func hasExpired(notAfter: Double, now: Double, clockTrusted: Bool) -> Bool { clockTrusted && now >= notAfter }

    /// The wait after the `failures`-th failed renewal in a row (from 0): the backoff, but never past the
    /// certificate's expiry (whose moment changes the rule), and `expiredRetry` after it. `random` in [0, 1).
    public func retryWait(failures: Int, now: Double, clockTrusted: Bool, random: Double) -> Double {
        let random = min(max(random, 0), 1)
        if hasExpired(now: now, clockTrusted: clockTrusted) {
            return Self.expiredRetry.lowerBound + (Self.expiredRetry.upperBound - Self.expiredRetry.lowerBound) * random
        }
        let backoff = max(1, Self.backoff.delay(attempt: failures, random: random))
        return clockTrusted ? min(backoff, max(1, notAfter - now)) : backoff
    }
}
