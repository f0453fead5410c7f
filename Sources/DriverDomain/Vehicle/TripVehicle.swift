/// What the vehicle's adapter read at one moment, kept from a trip's start to its end.
public struct VehicleReading: Codable, Sendable, Equatable {
    public var odometerKm: Double?
    public var fuelPercent: Double?
    /// Seconds since the engine started (PID 1F).
    public var engineRunSeconds: Int?

    public init(odometerKm: Double?, fuelPercent: Double?, engineRunSeconds: Int?) {
        self.odometerKm = odometerKm
        self.fuelPercent = fuelPercent
        self.engineRunSeconds = engineRunSeconds
    }

    /// Every figure a trip's report uses is known.
    public var isComplete: Bool { odometerKm != nil && fuelPercent != nil && engineRunSeconds != nil }
}

/// A trip as the vehicle saw it, beside the GNSS odometer (pure): its own odometer's distance, the fuel at both
/// ends, the engine's run time.
public struct TripVehicle: Codable, Sendable, Equatable {
    public var odometerStartKm: Double?
    public var odometerEndKm: Double?
    public var distanceMeters: Double?
    public var fuelStartPercent: Double?
    public var fuelEndPercent: Double?
    /// The engine's run time over the trip (from the end's reading back to the start's; the whole end reading
    /// when the engine was started again on the way).
    public var engineRunSeconds: Int?

    /// The two ends; nil when the vehicle said nothing at either.
    public init?(start: VehicleReading?, end: VehicleReading?) {
        guard let end else { return nil }
        odometerStartKm = start?.odometerKm
        odometerEndKm = end.odometerKm
        if let from = start?.odometerKm, let to = end.odometerKm, to >= from { distanceMeters = ((to - from) * 1000).rounded() }
        fuelStartPercent = start?.fuelPercent.map { ($0 * 10).rounded() / 10 }
        fuelEndPercent = end.fuelPercent.map { ($0 * 10).rounded() / 10 }
        if let to = end.engineRunSeconds { engineRunSeconds = start?.engineRunSeconds.map { to >= $0 ? to - $0 : to } ?? to }
        if odometerEndKm == nil, fuelEndPercent == nil, engineRunSeconds == nil { return nil }
    }

    /// The shortest trip judged: the car's odometer counts in 100 m steps, 5 % of 2 km.
    public static let judgedFrom = 2000.0

    /// Whether the two odometers disagree by more than 5 % of the vehicle's distance.
    public func disagrees(gnssMeters: Double) -> Bool {
        guard let vehicle = distanceMeters, vehicle >= Self.judgedFrom else { return false }
        return abs(gnssMeters - vehicle) > 0.05 * vehicle
    }
}
