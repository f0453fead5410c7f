#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain

/// A drive to synthesise: a start point, then legs driven or waited out, as a receiver reports them: at `hz`
/// epochs per second, with gaussian scatter and slow drift, multipath spikes, spans without a fix (tunnels),
/// spans where it repeats one stale fix, and a clock that may be off (a wrong receiver clock, a 1024-week
/// rollover).
public struct SyntheticRoute: Sendable, Codable, Equatable {
    public struct Point: Sendable, Codable, Equatable {
        public var lat: Double
        public var lon: Double
        public init(lat: Double, lon: Double) {
            self.lat = lat
            self.lon = lon
        }
    }

    public enum Leg: Sendable, Codable, Equatable {
        /// Drive in a straight line to `to` at `speed` m/s.
        case drive(to: Point, speed: Double)
        /// Stand still for `seconds`.
        case stop(seconds: Int)
        /// Change speed to `speed` m/s at `rate` m/s² along the last heading (a hard stop, a pull-away).
        case ramp(speed: Double, rate: Double)

        private enum CodingKeys: String, CodingKey { case to, speed, stop, ramp }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let seconds = try container.decodeIfPresent(Int.self, forKey: .stop) {
                self = .stop(seconds: seconds)
            } else if let rate = try container.decodeIfPresent(Double.self, forKey: .ramp) {
                self = .ramp(speed: try container.decode(Double.self, forKey: .speed), rate: rate)
            } else {
                self = .drive(to: try container.decode(Point.self, forKey: .to), speed: try container.decode(Double.self, forKey: .speed))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .drive(let to, let speed):
                try container.encode(to, forKey: .to)
                try container.encode(speed, forKey: .speed)
            case .stop(let seconds):
                try container.encode(seconds, forKey: .stop)
            case .ramp(let speed, let rate):
                try container.encode(speed, forKey: .speed)
                try container.encode(rate, forKey: .ramp)
            }
        }
    }

    /// A span of seconds from the start: without a fix (a tunnel: status V, quality 0), or (as a stale span)
    /// repeating the last fix unchanged, its old time included.
    public struct Dropout: Sendable, Codable, Equatable {
        public var at: Int
        public var seconds: Int
        public init(at: Int, seconds: Int) {
            self.at = at
            self.seconds = seconds
        }

        func contains(_ elapsed: Double) -> Bool { elapsed >= Double(at) && elapsed < Double(at + seconds) }
    }

    /// Multipath spikes: this share of fixes lands `minMetres` to `maxMetres` off in a random direction.
    public struct Spikes: Sendable, Codable, Equatable {
        public var share: Double
        public var minMetres: Double
        public var maxMetres: Double
        public init(share: Double, minMetres: Double = 150, maxMetres: Double = 2000) {
            self.share = share
            self.minMetres = minMetres
            self.maxMetres = maxMetres
        }
    }

    /// One epoch as synthesised: what the receiver reports and what was true.
    public struct Epoch: Sendable, Equatable {
        /// Seconds from the start (true time).
        public var elapsed: Double
        /// The fix the receiver reports (its time is the receiver's clock); nil: no fix.
        public var fix: Fix?
        /// Where the vehicle really is, and its true speed.
        public var truth: Point
        public var truthSpeed: Double
        public var spike: Bool
        /// A repeat of an earlier fix.
        public var stale: Bool
    }

    public var start: Point
    /// Seconds since 1970 of the first fix (true time).
    public var startTime: Double
    public var legs: [Leg]
    /// Standard deviation of position scatter per axis, metres (0: none).
    public var noise: Double
    public var dropouts: [Dropout]
    public var seed: UInt64
    /// Epochs per second (1, 5 and 10 Hz receivers are common).
    public var hz: Double
    /// The HDOP the receiver reports; gpsd derives its error estimate `eph` from it (0.9 gives 17.1 m).
    public var hdop: Double
    /// Random-walk step of the scatter's centre, metres per √second (a parked receiver's slow wander).
    public var drift: Double
    public var spikes: Spikes?
    /// Added to every time the receiver reports, seconds (a wrong clock; −2 × 1024 weeks is a double rollover).
    public var clockOffset: Double
    public var staleSpans: [Dropout]

    public init(
        start: Point, startTime: Double, legs: [Leg], noise: Double = 0, dropouts: [Dropout] = [], seed: UInt64 = 1, hz: Double = 1,
        hdop: Double = 0.9, drift: Double = 0, spikes: Spikes? = nil, clockOffset: Double = 0, staleSpans: [Dropout] = []
    ) {
        self.start = start
        self.startTime = startTime
        self.legs = legs
        self.noise = noise
        self.dropouts = dropouts
        self.seed = seed
        self.hz = hz
        self.hdop = hdop
        self.drift = drift
        self.spikes = spikes
        self.clockOffset = clockOffset
        self.staleSpans = staleSpans
    }

    private enum CodingKeys: String, CodingKey {
        case start, startTime, legs, noise, dropouts, seed, hz, hdop, drift, spikes, clockOffset, staleSpans
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            start: try c.decode(Point.self, forKey: .start), startTime: try c.decode(Double.self, forKey: .startTime),
            legs: try c.decode([Leg].self, forKey: .legs), noise: try c.decodeIfPresent(Double.self, forKey: .noise) ?? 0,
            dropouts: try c.decodeIfPresent([Dropout].self, forKey: .dropouts) ?? [], seed: try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1,
            hz: try c.decodeIfPresent(Double.self, forKey: .hz) ?? 1, hdop: try c.decodeIfPresent(Double.self, forKey: .hdop) ?? 0.9,
            drift: try c.decodeIfPresent(Double.self, forKey: .drift) ?? 0, spikes: try c.decodeIfPresent(Spikes.self, forKey: .spikes),
            clockOffset: try c.decodeIfPresent(Double.self, forKey: .clockOffset) ?? 0,
            staleSpans: try c.decodeIfPresent([Dropout].self, forKey: .staleSpans) ?? [])
    }

    /// What the receiver reports, one entry per epoch: nil where a dropout hides the fix.
    public func samples() -> [Fix?] { epochs().map(\.fix) }

    public func epochs() -> [Epoch] {
        var random = SplitMix64(seed: seed)
        var output: [Epoch] = []
        var position = start
        let step = 1 / max(hz, 0.01)
        var driftNorth = 0.0, driftEast = 0.0
        var lastFix: Fix?
        func emit(speed: Double, track: Double?) {
            let elapsed = Double(output.count) * step
            let truth = position
            if noise > 0 || drift > 0 {
                driftNorth += random.gaussian() * drift * step.squareRoot()
                driftEast += random.gaussian() * drift * step.squareRoot()
            }
            if dropouts.contains(where: { $0.contains(elapsed) }) {
                output.append(Epoch(elapsed: elapsed, fix: nil, truth: truth, truthSpeed: speed, spike: false, stale: false))
                return
            }
            if let lastFix, staleSpans.contains(where: { $0.contains(elapsed) }) {
                output.append(Epoch(elapsed: elapsed, fix: lastFix, truth: truth, truthSpeed: speed, spike: false, stale: true))
                return
            }
            var north = driftNorth, east = driftEast
            if noise > 0 {
                north += random.gaussian() * noise
                east += random.gaussian() * noise
            }
            var spike = false
            if let spikes, random.nextUnit() < spikes.share {
                spike = true
                let distance = spikes.minMetres + random.nextUnit() * (spikes.maxMetres - spikes.minMetres)
                let angle = random.nextUnit() * 2 * .pi
                north += distance * cos(angle)
                east += distance * sin(angle)
            }
            // A parked receiver's Doppler speed: a few cm/s, never above 0.3 m/s.
            let reported = speed == 0 && noise > 0 ? min(0.3, abs(random.gaussian()) * 0.1) : speed
            let fix = Fix(
                time: startTime + elapsed + clockOffset, latitude: truth.lat + north / 111_320,
                longitude: truth.lon + east / (111_320 * cos(truth.lat * .pi / 180)), altitude: 350, speed: reported, track: track,
                horizontalError: 19 * hdop, mode: 3, satellitesUsed: 9)
            lastFix = fix
            output.append(Epoch(elapsed: elapsed, fix: fix, truth: truth, truthSpeed: speed, spike: spike, stale: false))
        }
        var lastTrack: Double? = nil
        var speedNow = 0.0
        let perSecond = max(1, Int(hz.rounded()))
        for leg in legs {
            switch leg {
            case .stop(let seconds):
                speedNow = 0
                for _ in 0..<max(0, seconds * perSecond) { emit(speed: 0, track: lastTrack) }
            case .ramp(let target, let rate):
                let track = (lastTrack ?? 0) * .pi / 180
                let change = max(rate, 0.01) * step
                while abs(target - speedNow) > 1e-9 {
                    let next = target > speedNow ? min(target, speedNow + change) : max(target, speedNow - change)
                    let metres = (speedNow + next) / 2 * step
                    speedNow = next
                    position = Point(
                        lat: position.lat + metres * cos(track) / 111_320,
                        lon: position.lon + metres * sin(track) / (111_320 * cos(position.lat * .pi / 180)))
                    emit(speed: speedNow, track: lastTrack)
                }
            case .drive(let target, let speed):
                let distance = Geo.distance(latitude1: position.lat, longitude1: position.lon, latitude2: target.lat, longitude2: target.lon)
                let track = Self.bearing(from: position, to: target)
                lastTrack = track
                let seconds = max(1, Int((distance / max(speed, 0.1)).rounded(.up)))
                let steps = seconds * perSecond
                let origin = position
                for index in 1...steps {
                    let fraction = Double(index) / Double(steps)
                    position = Point(lat: origin.lat + (target.lat - origin.lat) * fraction, lon: origin.lon + (target.lon - origin.lon) * fraction)
                    emit(speed: distance / Double(seconds), track: track)
                }
                speedNow = distance / Double(seconds)
            }
        }
        return output
    }

    static func bearing(from a: Point, to b: Point) -> Double {
        let phi1 = a.lat * .pi / 180, phi2 = b.lat * .pi / 180, dLambda = (b.lon - a.lon) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let degrees = atan2(y, x) * 180 / .pi
        return (degrees + 360).truncatingRemainder(dividingBy: 360)
    }
}

extension SplitMix64 {
    /// A standard normal sample (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &self), 1e-12)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
