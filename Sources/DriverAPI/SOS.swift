/// Params of `sos.raise`.
public struct SOSParams: Codable, Sendable, Equatable {
    /// What the driver adds (at most `maxNoteLength` characters), e.g. "van hit, driver hurt".
    public var note: String?

    public static let maxNoteLength = 500

    public init(note: String? = nil) { self.note = note }
}

/// Where the unit was when an SOS was raised: its latest accepted fix, if one is at most five minutes old.
public struct SOSPosition: Codable, Sendable, Equatable {
    public var lat: Double
    public var lng: Double
    /// Horizontal error, metres.
    public var accuracy: Double?
    /// Unix seconds of the fix.
    public var fixTime: Double
    /// How old the fix was when the SOS was raised, seconds.
    public var ageSeconds: Double

    public init(lat: Double, lng: Double, accuracy: Double?, fixTime: Double, ageSeconds: Double) {
        self.lat = lat
        self.lng = lng
        self.accuracy = accuracy
        self.fixTime = fixTime
        self.ageSeconds = ageSeconds
    }
}

public enum SOSState: String, Codable, Sendable, Equatable, CaseIterable {
    /// Stored and being sent: repeated until the backend acknowledges it.
    case raised
    /// The backend has it.
    case acknowledged
}

/// Result of `sos.raise` and params of `sos.changed`.
public struct SOSView: Codable, Sendable, Equatable {
    public var sosId: String
    public var state: SOSState
    /// Unix seconds, from the unit's trusted clock.
    public var raisedAt: Double
    public var timeSource: TimeSource
    /// nil when the unit had no fix in the last five minutes (`gps` says why).
    public var position: SOSPosition?
    /// The receiver's state when it was raised.
    public var gps: GPSLinkState
    public var note: String?
    /// Unix seconds when the backend's ack arrived.
    public var acknowledgedAt: Double?

    public init(
        sosId: String, state: SOSState, raisedAt: Double, timeSource: TimeSource, position: SOSPosition?, gps: GPSLinkState, note: String?,
        acknowledgedAt: Double? = nil
    ) {
        self.sosId = sosId
        self.state = state
        self.raisedAt = raisedAt
        self.timeSource = timeSource
        self.position = position
        self.gps = gps
        self.note = note
        self.acknowledgedAt = acknowledgedAt
    }
}

// MARK: Methods

extension Methods {
    /// A driver's call for help: stored durably, sent before anything else, repeated until the backend acks it.
    /// Allowed while driving and off shift; refused only when no backend is configured.
    ///
    /// driverctl: `driverctl sos [--note TEXT]`.
    ///
    /// Since API 1.8. **Mutating.** Params: `{"note": "van hit, driver hurt"}` (optional, at most 500 characters). The
    /// driver's call for help: stored durably before the answer (it survives `kill -9` and a power cut), sent to the
    /// backend (`POST /api/v1/rider/sos`) ahead of everything queued, and repeated until the backend acknowledges it.
    /// Allowed while driving (no safety gate) and off shift. Result (also the `sos.changed` notification):
    ///
    /// ```json
    /// {"sosId": "8e908d2f-…", "state": "raised", "raisedAt": 1795852800.2, "timeSource": "gps",
    ///  "position": {"lat": 49.0134, "lng": 12.1016, "accuracy": 4.2, "fixTime": 1795852799.0, "ageSeconds": 1.2},
    ///  "gps": "connected", "note": "van hit, driver hurt"}
    /// ```
    ///
    /// `position` is the latest accepted fix when it is at most five minutes old, else absent (`gps` says why).
    /// `unavailable` (1002) when no backend is configured (an SOS would reach nobody); `invalidParams` for a longer
    /// note.
    public static let sosRaise = Method<SOSParams, SOSView>("sos.raise", mutating: true, screen: true)

    /// This file's methods, in `Methods.all`.
    static let sos: [MethodDescriptor] = [sosRaise.descriptor]
}
