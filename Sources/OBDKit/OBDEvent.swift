import DriverAPI

/// What the reader publishes, on its own thread, in order.
public enum OBDEvent: Sendable, Equatable {
    /// The link changed; `detail` says why it is not `ok` (an error, the adapter's answer).
    case link(VehicleLinkState, detail: String?)
    /// The mode 01 PIDs the vehicle answers to (after each connection's discovery).
    case supported(Set<UInt8>)
    case reading(OBDReading)
    /// The vehicle gave no value for this PID (unsupported, `NO DATA`, or an answer that does not fit): it is
    /// unknown now.
    case unavailable(OBDPID)
    /// The adapter was asked to rest (`ATLP`); whether it took it.
    case lowPower(accepted: Bool)
}

/// Receives the reader's events on the reader's thread: implementations are lock-guarded and return quickly.
public protocol OBDEventHandler: Sendable {
    func handle(_ event: OBDEvent)
}
