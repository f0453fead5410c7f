#if canImport(Glibc)
import Glibc
#endif
import DriverAPI

/// Recent positions over a span of time, at most one per `spacing` seconds, with robust statistics: the
/// median centre (a parked receiver scatters, and a multipath spike must not drag the centre) and how far
/// that centre moved between the window's older and newer halves.
struct PositionWindow: Sendable {
    struct Sample: Sendable {
        var time: Double
        /// Metres east and north of the window's origin.
        var east: Double
        var north: Double
        var error: Double?
    }

    let span: Double
    let spacing: Double
    private(set) var samples: [Sample] = []
    private var origin: (lat: Double, lon: Double, metresPerDegreeLon: Double)?

    init(span: Double, spacing: Double = 0.9) {
        self.span = span
        self.spacing = spacing
    }

    var isEmpty: Bool { samples.isEmpty }
    var first: Sample? { samples.first }
    /// Seconds from the oldest to the newest sample.
    var covered: Double { (samples.last?.time ?? 0) - (samples.first?.time ?? 0) }

    /// Adds `fix` unless one was added less than `spacing` ago (so a 10 Hz receiver costs what 1 Hz does);
    /// drops samples older than `span`. Returns whether it was added.
    @discardableResult
    mutating func add(_ fix: Fix) -> Bool {
        if let last = samples.last, fix.time - last.time < spacing { return false }
        if origin == nil {
            origin = (fix.latitude, fix.longitude, Self.metresPerDegree * cos(fix.latitude * .pi / 180))
        }
        let (east, north) = offset(fix)
        samples.append(Sample(time: fix.time, east: east, north: north, error: fix.horizontalError))
        let oldest = fix.time - span
        if let keep = samples.firstIndex(where: { $0.time >= oldest }), keep > 0 { samples.removeFirst(keep) }
        return true
    }

    mutating func removeAll() {
        samples = []
        origin = nil
    }

    static let metresPerDegree = 111_320.0

    /// Metres east and north of the origin (an equirectangular projection: exact enough over a few km).
    func offset(_ fix: Fix) -> (east: Double, north: Double) {
        guard let origin else { return (0, 0) }
        return ((fix.longitude - origin.lon) * origin.metresPerDegreeLon, (fix.latitude - origin.lat) * Self.metresPerDegree)
    }

    /// The component-wise median of the samples.
    var centre: (east: Double, north: Double)? { Self.median(samples[...]) }

    /// The median error estimate of the samples (nil when none reported one).
    var medianError: Double? {
        let errors = samples.compactMap(\.error).sorted()
        return errors.isEmpty ? nil : errors[errors.count / 2]
    }

    /// How far the median of the newer half lies from the median of the older half: a vehicle creeping along
    /// moves its centre, a parked one only scatters around it.
    var centreDrift: Double {
        guard samples.count >= 4 else { return 0 }
        let half = samples.count / 2
        guard let older = Self.median(samples[..<half]), let newer = Self.median(samples[half...]) else { return 0 }
        return ((newer.east - older.east) * (newer.east - older.east) + (newer.north - older.north) * (newer.north - older.north)).squareRoot()
    }

    /// The scatter of the samples around their centre as a robust standard deviation per axis, metres (from the
    /// median distance: for gaussian scatter that is σ·√(2 ln 2)).
    var scatter: Double {
        guard let centre, !samples.isEmpty else { return 0 }
        let distances = samples.map { sample in
            ((sample.east - centre.east) * (sample.east - centre.east) + (sample.north - centre.north) * (sample.north - centre.north)).squareRoot()
        }.sorted()
        return distances[distances.count / 2] / 1.1774
    }

    /// How far the two halves' medians may lie apart from scatter alone (99 %): the standard error of a median
    /// is 1.2533 σ/√m for m samples; two halves of n/2 each, in two dimensions.
    var driftFromScatter: Double {
        guard samples.count >= 4 else { return .infinity }
        return 3.03 * 1.2533 * scatter * 2 / Double(samples.count).squareRoot()
    }

    /// The share of samples within `radius` metres of the centre.
    func shareWithin(_ radius: Double) -> Double {
        guard let centre, !samples.isEmpty else { return 0 }
        let inside = samples.filter { sample in
            let east = sample.east - centre.east, north = sample.north - centre.north
            return east * east + north * north <= radius * radius
        }.count
        return Double(inside) / Double(samples.count)
    }

    /// Metres from the centre to `fix`.
    func distanceFromCentre(_ fix: Fix) -> Double? {
        guard let centre else { return nil }
        let (east, north) = offset(fix)
        return ((east - centre.east) * (east - centre.east) + (north - centre.north) * (north - centre.north)).squareRoot()
    }

    private static func median(_ slice: ArraySlice<Sample>) -> (east: Double, north: Double)? {
        guard !slice.isEmpty else { return nil }
        func middle(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            let mid = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        }
        return (middle(slice.map(\.east)), middle(slice.map(\.north)))
    }
}
