import DriverAPI
/// Routes the project ships, so `make demo` and tests need nothing from outside the repository.
public enum RoutePresets {
    /// Regensburg old town: wait at the depot, drive to a restaurant, wait for the order, drive to a customer
    /// (through a short tunnel), hand over, and stand still. Speeds change as a careful driver changes them
    /// (1 to 2.5 m/s²), so the drive holds no harsh braking or acceleration.
    public static let demo = SyntheticRoute(
        start: .init(lat: 49.01890, lon: 12.09270),
        startTime: 1_795_852_800,  // 2026-11-28 08:00:00 UTC
        legs: [
            .stop(seconds: 20),
            .ramp(speed: 8, rate: 1.5),
            .drive(to: .init(lat: 49.01950, lon: 12.09520), speed: 8),
            .ramp(speed: 10, rate: 1),
            .drive(to: .init(lat: 49.02100, lon: 12.09700), speed: 10),
            .ramp(speed: 0, rate: 2.5),
            .stop(seconds: 40),
            .ramp(speed: 12, rate: 1.5),
            .drive(to: .init(lat: 49.01800, lon: 12.10100), speed: 12),
            .ramp(speed: 7, rate: 2),
            .drive(to: .init(lat: 49.01600, lon: 12.10050), speed: 7),
            .ramp(speed: 0, rate: 2),
            .stop(seconds: 60),
        ],
        noise: 1.5,
        dropouts: [.init(at: 130, seconds: 8)],
        seed: 7)

    /// Standing still for `seconds` with realistic jitter.
    public static func parked(seconds: Int, noise: Double = 2.5) -> SyntheticRoute {
        SyntheticRoute(start: .init(lat: 52.52000, lon: 13.40500), startTime: 1_795_852_800, legs: [.stop(seconds: seconds)], noise: noise, seed: 3)
    }

    /// The ordinary parked receiver of a street: 30 s of driving north at 12 m/s, then parked for `parkSeconds`
    /// with positions scattered by `sigma` metres around the spot (gpsd reports `eph` 17.1 m for HDOP 0.9) and a
    /// Doppler speed of a few cm/s.
    public static func street(parkSeconds: Int, sigma: Double = 5, startTime: Double = 1_795_852_800, seed: UInt64 = 21) -> SyntheticRoute {
        let start = SyntheticRoute.Point(lat: 52.52000, lon: 13.40500)
        return SyntheticRoute(
            start: start, startTime: startTime, legs: [.drive(to: .init(lat: start.lat + 360 / 111_320, lon: start.lon), speed: 12), .stop(seconds: parkSeconds)],
            noise: sigma, seed: seed)
    }

    /// Driving a square block for `laps` laps at `speed`, with no stops.
    public static func driving(laps: Int, speed: Double = 12) -> SyntheticRoute {
        let corners: [SyntheticRoute.Point] = [
            .init(lat: 52.52000, lon: 13.40500), .init(lat: 52.52450, lon: 13.40500),
            .init(lat: 52.52450, lon: 13.41240), .init(lat: 52.52000, lon: 13.41240),
        ]
        var legs: [SyntheticRoute.Leg] = []
        for _ in 0..<laps {
            for corner in corners.dropFirst() + [corners[0]] { legs.append(.drive(to: corner, speed: speed)) }
        }
        return SyntheticRoute(start: corners[0], startTime: 1_795_852_800, legs: legs, noise: 1.0, seed: 5)
    }
}
