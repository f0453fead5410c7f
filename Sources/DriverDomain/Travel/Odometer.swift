import DriverAPI

/// Distance driven, from accepted fixes only (the fix filter runs first), pure.
///
/// Between fixes close in time the receiver's Doppler speed is integrated (trapezoid): position scatter and
/// multipath spikes do not lengthen it, where summing the chords of noisy positions overstates a drive by
/// several percent (and by 50× for a parked unit's scatter). Across a gap (a tunnel, slow sampling, a restart)
/// or without a speed, the straight line between the two fixes is counted and flagged as bridged, unless it is
/// within the fixes' own error while the vehicle stands.
public struct Odometer: Sendable, Equatable, Codable {
    /// The last fix counted.
    public typealias Anchor = FixPoint

    /// Longest step between two fixes that is integrated from their speeds; longer ones are gaps.
    public static let maxIntegratedStep = 5.0
    /// A gap is bridged only if a vehicle could have covered it (216 km/h): a longer chord is a jump between two
    /// tracks (a re-anchored filter, a receiver that came back somewhere else), counted as a gap with no distance.
    public static let maxBridgedSpeed = 60.0
    /// Below this Doppler speed (m/s) the vehicle stands: nothing is added. The motion detector's own threshold.
    public static let standingSpeed = MotionThresholds().stationarySpeed

    public private(set) var metres = 0.0
    /// Of `metres`, what was bridged across gaps as straight lines.
    public private(set) var bridgedMetres = 0.0
    public private(set) var gaps = 0
    public private(set) var anchor: Anchor?
    /// Metres integrated while the motion detector says the vehicle stands, in one run of fixes at speed: the first
    /// metres of a pull-away it has not confirmed yet, or a parked receiver's Doppler noise (the real stationary log
    /// reads 0.3 to 0.9 m/s: 28 m in 8 parked minutes, and an odometer state to sync every 30 s). Counted when it
    /// says moving; dropped when a fix below the standing speed ends the run.
    private var unconfirmedMetres = 0.0

    public init() {}

    public init(metres: Double, bridgedMetres: Double, gaps: Int, anchor: Anchor?) {
        self.metres = metres
        self.bridgedMetres = bridgedMetres
        self.gaps = gaps
        self.anchor = anchor
    }

    /// Moves the anchor without counting (off shift nothing is driven for the record).
    public mutating func skip(_ fix: Fix) { anchor = Anchor(fix) }

    /// Counts the way from the last fix to this one; returns the metres added.
    @discardableResult
    public mutating func observe(_ fix: Fix, motion: Motion) -> Double {
        let next = Anchor(fix)
        defer { anchor = next }
        guard let last = anchor, next.time > last.time else { return 0 }
        let added = way(from: last, to: next, motion: motion)
        metres += added
        return added
    }

    private mutating func way(from last: Anchor, to next: Anchor, motion: Motion) -> Double {
        let step = next.time - last.time
        if step <= Self.maxIntegratedStep, let v1 = last.speed, let v2 = next.speed {
            let integrated = max(v1, v2) >= Self.standingSpeed ? (v1 + v2) / 2 * step : 0
            if motion == .stationary {
                unconfirmedMetres = v2 >= Self.standingSpeed ? unconfirmedMetres + integrated : 0
                return 0
            }
            return integrated + takeUnconfirmed()
        }
        // A parked unit's scatter is not a drive: nothing while the motion detector says it stands, nor within the
        // fixes' own error.
        guard motion != .stationary else {
            unconfirmedMetres = 0
            return 0
        }
        let confirmed = takeUnconfirmed()
        let chord = Geo.distance(latitude1: last.lat, longitude1: last.lng, latitude2: next.lat, longitude2: next.lng)
        let noise = 2 * max(last.horizontalError ?? 10, next.horizontalError ?? 10)
        guard chord > noise || (motion == .moving && chord > noise / 2) else { return confirmed }
        guard chord <= Self.maxBridgedSpeed * step + noise else {
            gaps += 1
            return confirmed
        }
        if step > Self.maxIntegratedStep {
            bridgedMetres += chord
            gaps += 1
        }
        return chord + confirmed
    }

    private mutating func takeUnconfirmed() -> Double {
        defer { unconfirmedMetres = 0 }
        return unconfirmedMetres
    }
}
