/// Harsh braking and acceleration from the receiver's speed, as telematics firmware reports them (Teltonika's
/// "eco driving"), pure. Driven by accepted fixes only (the fix filter has already thrown out jumps).
///
/// - The speed is the median of the last three reports, so one bad report (a receiver that derives its speed
///   from positions, a glitch) never makes an event; the acceleration is the median speed's change over `window`
///   seconds, so a 10 Hz receiver and a 1 Hz one measure the same.
/// - Only with the ignition on (or no ignition input) and above `minimumSpeed` (10 km/h) at either end of the
///   window: a parked unit's Doppler noise never counts.
/// - One event per manoeuvre: from the first window beyond the threshold to the last, with its peak; a gap in the
///   fixes, the ignition off or the opposite manoeuvre ends it.
public struct HarshDrivingDetector: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        /// m/s², positive; 0 turns braking events off.
        public var braking: Double
        /// m/s², positive; 0 turns acceleration events off.
        public var acceleration: Double
        public var minimumSpeed: Double
        public var window: Double
        public init(braking: Double = 3.5, acceleration: Double = 3.0, minimumSpeed: Double = 10 / 3.6, window: Double = 1) {
            self.braking = braking
            self.acceleration = acceleration
            self.minimumSpeed = minimumSpeed
            self.window = window
        }
    }

    public enum Kind: String, Sendable, Equatable, Codable {
        case braking = "HARSH_BRAKING"
        case acceleration = "HARSH_ACCELERATION"
    }

    public struct Event: Sendable, Equatable {
        public var kind: Kind
        public var startedAt: Double
        public var endedAt: Double
        /// The strongest change over one window, m/s², positive for both kinds.
        public var peak: Double
        /// The threshold it crossed, m/s².
        public var threshold: Double
        public var speedFrom: Double
        public var speedTo: Double
        /// Where it began.
        public var lat: Double
        public var lng: Double
    }

    struct Sample: Sendable, Equatable {
        var time: Double
        var speed: Double
        var lat: Double
        var lng: Double
    }

    public var settings: Settings
    /// The last three raw reports (for the median) and the smoothed series covering one window.
    private var raw: [Double] = []
    private var smoothed: [Sample] = []
    private var episode: Event?
    /// Fixes further apart than this break the series (a tunnel, a paused receiver).
    static let maximumGap = 3.0

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// An accepted fix; returns the event that just ended, if any.
    public mutating func observe(time: Double, speed: Double?, lat: Double, lng: Double, ignition: Bool?) -> Event? {
        guard let speed, ignition ?? true else { return interrupt() }
        if let last = smoothed.last, time <= last.time { return nil }
        // After a gap the series starts again (nothing can end on the first fixes of a new one).
        let ended = smoothed.last.map { time - $0.time > Self.maximumGap } == true ? interrupt() : nil
        let now = record(time: time, speed: speed, lat: lat, lng: lng)
        return ended ?? now
    }

    private mutating func record(time: Double, speed: Double, lat: Double, lng: Double) -> Event? {
        raw = Array((raw + [speed]).suffix(3))
        let median = raw.count < 3 ? speed : raw.sorted()[1]
        let now = Sample(time: time, speed: median, lat: lat, lng: lng)
        smoothed.append(now)
        // Keep the newest sample at least one window old, and what came after it.
        if let keep = smoothed.lastIndex(where: { time - $0.time >= settings.window }) { smoothed.removeFirst(keep) }
        guard raw.count == 3, let reference = smoothed.first, time - reference.time >= settings.window else { return nil }
        let change = (now.speed - reference.speed) / (now.time - reference.time)
        let fast = max(now.speed, reference.speed) >= settings.minimumSpeed
        let kind: Kind? = if fast, settings.braking > 0, change <= -settings.braking {
            .braking
        } else if fast, settings.acceleration > 0, change >= settings.acceleration {
            .acceleration
        } else {
            nil
        }
        guard let kind else { return finish() }
        if var current = episode, current.kind == kind {
            current.endedAt = now.time
            current.peak = max(current.peak, abs(change))
            current.speedTo = now.speed
            episode = current
            return nil
        }
        let ended = finish()
        episode = Event(
            kind: kind, startedAt: reference.time, endedAt: now.time, peak: abs(change),
            threshold: kind == .braking ? settings.braking : settings.acceleration, speedFrom: reference.speed, speedTo: now.speed,
            lat: reference.lat, lng: reference.lng)
        return ended
    }

    private mutating func finish() -> Event? {
        defer { episode = nil }
        return episode
    }

    /// The series breaks (no speed, the ignition off, off shift): the manoeuvre going on ends here.
    @discardableResult
    public mutating func interrupt() -> Event? {
        raw = []
        smoothed = []
        return finish()
    }
}
