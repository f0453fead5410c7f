#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain

/// A drive to synthesise: a start point, then legs driven or waited out, one fix per second.
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

        private enum CodingKeys: String, CodingKey { case to, speed, stop }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let seconds = try container.decodeIfPresent(Int.self, forKey: .stop) {
                self = .stop(seconds: seconds)
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
            }
        }
    }

    /// A span with no fix (a tunnel): the receiver reports status V and quality 0.
    public struct Dropout: Sendable, Codable, Equatable {
        /// Seconds from the start.
        public var at: Int
        public var seconds: Int
        public init(at: Int, seconds: Int) {
            self.at = at
            self.seconds = seconds
        }
    }

    public var start: Point
    /// Seconds since 1970 of the first fix.
    public var startTime: Double
    public var legs: [Leg]
    /// Standard deviation of position noise, metres (0: none).
    public var noise: Double
    public var dropouts: [Dropout]
    public var seed: UInt64

    public init(start: Point, startTime: Double, legs: [Leg], noise: Double = 0, dropouts: [Dropout] = [], seed: UInt64 = 1) {
        self.start = start
        self.startTime = startTime
        self.legs = legs
        self.noise = noise
        self.dropouts = dropouts
        self.seed = seed
    }

    /// The true track, one entry per second: nil where a dropout hides the fix.
    public func samples() -> [Fix?] {
        var random = SplitMix64(seed: seed)
        var output: [Fix?] = []
        var position = start
        var time = startTime
        func emit(speed: Double, track: Double?) {
            let second = output.count
            if dropouts.contains(where: { second >= $0.at && second < $0.at + $0.seconds }) {
                output.append(nil)
            } else {
                let (north, east) = noise > 0 ? (random.gaussian() * noise, random.gaussian() * noise) : (0, 0)
                let lat = position.lat + north / 111_320
                let lon = position.lon + east / (111_320 * cos(position.lat * .pi / 180))
                let jitterSpeed = noise > 0 && speed == 0 ? abs(random.gaussian()) * noise * 0.05 : speed
                output.append(Fix(
                    time: time, latitude: lat, longitude: lon, altitude: 350, speed: jitterSpeed, track: track,
                    horizontalError: noise > 0 ? noise * 2 : 3, mode: 3, satellitesUsed: 9))
            }
            time += 1
        }
        var lastTrack: Double? = nil
        for leg in legs {
            switch leg {
            case .stop(let seconds):
                for _ in 0..<max(0, seconds) { emit(speed: 0, track: lastTrack) }
            case .drive(let target, let speed):
                let distance = Geo.distance(latitude1: position.lat, longitude1: position.lon, latitude2: target.lat, longitude2: target.lon)
                let track = Self.bearing(from: position, to: target)
                lastTrack = track
                let steps = max(1, Int((distance / max(speed, 0.1)).rounded(.up)))
                let origin = position
                for step in 1...steps {
                    let fraction = Double(step) / Double(steps)
                    position = Point(lat: origin.lat + (target.lat - origin.lat) * fraction, lon: origin.lon + (target.lon - origin.lon) * fraction)
                    emit(speed: distance / Double(steps), track: track)
                }
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
