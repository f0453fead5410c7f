import DriverAPI

/// Limits of the fix-quality filter (the design brief's defaults).
public struct FixQualityLimits: Sendable, Equatable {
    /// No road vehicle goes faster, m/s (252 km/h): a fix implying more is a spike.
    public var maxSpeed = 70.0
    /// A fix whose error estimate (`eph`, 95 %) is over this, metres, is too vague to use.
    public var maxHorizontalError = 100.0
    /// Rejected fixes that agree with each other this many times in a row, over at least `reanchorSeconds` of
    /// their own time, are the truth and the anchor was wrong (an outlier accepted after a tunnel, a receiver
    /// whose clock was reset): the filter re-anchors on them.
    public var reanchorFixes = 3
    public var reanchorSeconds = 3.0
    /// How far a jump may outrun the receiver's own (Doppler) speed, m/s, plus `maxAcceleration` × seconds.
    public var dopplerMargin = 15.0
    public var maxAcceleration = 10.0
    /// Error assumed for a fix without `eph`, metres.
    public var assumedError = 15.0

    public init() {}
}

/// The fix-quality filter, pure: every fix from the receiver passes here before anything else sees it.
///
/// A fix no vehicle could have produced is rejected with a reason and counted: no 2D/3D fix, an error
/// estimate over the limit, a time not after the last accepted fix, a time a whole number of 1024-week GPS
/// eras behind the reference clock, a reported speed over the limit, or a position that the last accepted
/// fix could only have reached faster than that (or much faster than the receiver's own speed says).
/// Distances are judged beyond both fixes' error estimates, so parked scatter and 10 Hz jitter pass.
///
/// One bad anchor must not poison everything after it: rejected fixes that agree with each other for a few
/// fixes and seconds re-anchor the filter (counted in `reanchors`).
public struct FixFilter: Sendable {
    public enum Verdict: Sendable, Equatable {
        case accept
        /// Accepted, and the filter's anchor moved to it (the fixes before it were wrong).
        case reanchor
        /// The last accepted epoch reported again: gpsd reports an epoch in parts (a TPV after RMC, another
        /// after GGA). Not new, not wrong, not counted; a third report of it on is a stale repeat (`time`).
        case duplicate
        case reject(FixRejection)
    }

    /// Reports of one epoch after the first that are gpsd's own (its RMC and GGA parts: one more).
    static let freeRepeats = 1

    /// 1024 weeks: the GPS week number's era.
    public static let gpsEra = 1024.0 * 7 * 86400
    /// How close to whole eras a time difference must be to count as a rollover.
    static let rolloverTolerance = 7.0 * 86400

    public let limits: FixQualityLimits
    public private(set) var lastAccepted: Fix?
    public private(set) var rejected: [FixRejection: Int] = [:]
    public private(set) var accepted = 0
    public private(set) var reanchors = 0
    /// Rejected fixes (jumps or times before the anchor) that agree with each other, oldest first.
    private var candidates: [Fix] = []
    /// Reports of the last accepted epoch seen since it was accepted.
    private var repeatsOfLast = 0

    public init(limits: FixQualityLimits = FixQualityLimits()) { self.limits = limits }

    /// Judges `fix`. `reference`: a time the fix's date is checked against for a rollover (the system clock,
    /// the last GPS time the unit knew); nil when none is known.
    public mutating func evaluate(_ fix: Fix, reference: Double? = nil) -> Verdict {
        if let reason = intrinsicProblem(fix, reference: reference) { return reject(reason) }
        guard let anchor = lastAccepted else { return accept(fix) }
        if fix.time <= anchor.time {
            // The same epoch again (or a repeated stale fix) is never a new timeline.
            if fix.time == anchor.time {
                repeatsOfLast += 1
                return repeatsOfLast <= Self.freeRepeats && Geo.distance(anchor, fix) < 50 ? .duplicate : reject(.time)
            }
            return candidate(fix, reason: .time)
        }
        if let reason = jump(from: anchor, to: fix) { return candidate(fix, reason: reason) }
        return accept(fix)
    }

    /// gpsd said the receiver has no fix (mode < 2): counted like any other rejection.
    public mutating func noFixReport() { rejected[.mode, default: 0] += 1 }

    public var totalRejected: Int { rejected.values.reduce(0, +) }

    /// Problems a fix has on its own, whatever came before.
    private func intrinsicProblem(_ fix: Fix, reference: Double?) -> FixRejection? {
        guard fix.mode >= 2, fix.latitude.isFinite, fix.longitude.isFinite, abs(fix.latitude) <= 90, abs(fix.longitude) <= 180
        else { return .mode }
        if let error = fix.horizontalError, error > limits.maxHorizontalError { return .horizontalError }
        if let reference, Self.isRollover(fix.time, reference: reference) { return .rollover }
        if let speed = fix.speed, speed > limits.maxSpeed { return .speed }
        return nil
    }

    /// Whether `time` lies a whole number (1 to 3) of GPS eras behind `reference`, within a week.
    public static func isRollover(_ time: Double, reference: Double) -> Bool {
        let behind = reference - time
        guard behind > gpsEra - rolloverTolerance else { return false }
        let eras = (behind / gpsEra).rounded()
        return (1...3).contains(eras) && abs(behind - eras * gpsEra) <= rolloverTolerance
    }

    /// Why `fix` cannot follow `from`, if it cannot: an implied speed (beyond both error estimates) over the
    /// limit, or far over what the receiver's own speed allows.
    func jump(from: Fix, to fix: Fix) -> FixRejection? {
        let seconds = fix.time - from.time
        guard seconds > 0 else { return .time }
        let errorA = from.horizontalError ?? limits.assumedError, errorB = fix.horizontalError ?? limits.assumedError
        let beyondError = max(0, Geo.distance(from, fix) - (errorA * errorA + errorB * errorB).squareRoot())
        // Over a tenth of a second (a 10 Hz receiver) metres of jitter beyond the error estimate would read as
        // huge speeds: speeds are judged over at least 0.2 s, and against the Doppler speed over at least 1 s.
        if beyondError / max(seconds, 0.2) > limits.maxSpeed { return .jump }
        if let speedA = from.speed, let speedB = fix.speed,
           beyondError / max(seconds, 1) > max(speedA, speedB) + limits.dopplerMargin + limits.maxAcceleration * seconds {
            return .jump
        }
        return nil
    }

    private mutating func accept(_ fix: Fix) -> Verdict {
        lastAccepted = fix
        accepted += 1
        candidates = []
        repeatsOfLast = 0
        return .accept
    }

    private mutating func reject(_ reason: FixRejection) -> Verdict {
        rejected[reason, default: 0] += 1
        return .reject(reason)
    }

    /// A fix rejected for its time or its jump: kept as a candidate of a new anchor while the candidates agree.
    private mutating func candidate(_ fix: Fix, reason: FixRejection) -> Verdict {
        if let last = candidates.last, fix.time <= last.time || jump(from: last, to: fix) != nil {
            candidates = []
        }
        candidates.append(fix)
        if candidates.count >= limits.reanchorFixes, fix.time - candidates[0].time >= limits.reanchorSeconds {
            reanchors += 1
            _ = accept(fix)
            return .reanchor
        }
        return reject(reason)
    }
}
