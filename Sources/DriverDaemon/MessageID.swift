/// journald `MESSAGE_ID`s for the daemon's key events. Stable forever: operators filter on them
/// (`journalctl MESSAGE_ID=...`), and the message catalog explains each one.
public enum MessageID: String, Sendable, CaseIterable {
    case started = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f70"
    case listening = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f71"
    case stopping = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f72"
    case stopped = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f73"
    case configWarning = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f74"
    case logLevelChanged = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f75"
    case gpsLink = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f76"
    case motionChanged = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f77"
    case powerMode = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f78"
    case rateRequest = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f79"
    case fixGap = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7a"
    case authRequired = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7b"
    case outboxRefused = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7c"
    case backlogTrimmed = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7d"
    case taskConflict = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7e"
    case noUsableFix = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f7f"
    case clockSource = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f80"
    case fixReanchored = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f81"
    case arrivalDetected = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f82"
    case sosRaised = "3f5d1e0a8b2c4d6e9f1a2b3c4d5e6f83"
}
