import DriverAPI

/// The offline ETA of the design brief (§3.4): remaining distance along the route polyline, or great-circle
/// × 1.3 without one, over the recent average speed. Pure.
public enum LocalETA {
    public typealias Point = GeoPoint

    /// Roads are longer than the straight line: the brief's detour factor.
    public static let detourFactor = 1.3
    /// Speed assumed without a recent one (urban driving, 30 km/h), and the least one used (a stop at a
    /// light must not make the ETA endless).
    public static let defaultSpeed = 8.3
    public static let minimumSpeed = 3.0

    public static func distance(_ a: Point, _ b: Point) -> Double {
        Geo.distance(latitude1: a.lat, longitude1: a.lng, latitude2: b.lat, longitude2: b.lng)
    }

    /// Metres still to drive from `position` to `destination`: along `path` (which ends at the destination)
    /// from its vertex nearest to the position, else the straight line × 1.3.
    public static func remainingDistance(from position: Point, to destination: Point, along path: [Point]) -> Double {
        guard path.count >= 2, let nearest = path.indices.min(by: { distance(path[$0], position) < distance(path[$1], position) }) else {
            return distance(position, destination) * detourFactor
        }
        var metres = distance(position, path[nearest])
        for index in nearest..<(path.count - 1) { metres += distance(path[index], path[index + 1]) }
        // A position far off the path (a detour, a wrong path) is better served by the straight line.
        return min(metres, distance(position, destination) * detourFactor * 2)
    }

    public static func seconds(distance metres: Double, recentSpeed: Double?) -> Double {
        metres / max(minimumSpeed, recentSpeed ?? defaultSpeed)
    }
}

/// The average speed over the last minutes of driving, for the local ETA. Only moving samples count, so a
/// stop at a store does not drag it to zero. Pure: the caller feeds fixes.
public struct RecentSpeed: Sendable, Equatable {
    public let window: Double
    private var samples: [(time: Double, speed: Double)] = []

    public init(window: Double = 300) { self.window = window }

    public mutating func observe(time: Double, speed: Double?) {
        guard let speed, speed >= 1.5 else { return }
        // At most one sample a second, whatever the receiver's rate.
        if let last = samples.last, time - last.time < 0.9, time >= last.time { return }
        samples.append((time, speed))
        samples.removeAll { $0.time < time - window }
    }

    /// nil without a moving sample in the window.
    public var average: Double? {
        samples.isEmpty ? nil : samples.map(\.speed).reduce(0, +) / Double(samples.count)
    }

    public static func == (a: RecentSpeed, b: RecentSpeed) -> Bool {
        a.window == b.window && a.samples.map(\.time) == b.samples.map(\.time) && a.samples.map(\.speed) == b.samples.map(\.speed)
    }
}
