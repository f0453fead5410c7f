/// What an owner may ask of the sending loop besides registering its kinds (`attach(to:)`): send what is queued
/// now and wait for that attempt (a code checked after its task's transitions, the shift's last pings). Owners
/// hold this and the `BackendSession`, never the uplink.
struct OutboxFlush: Sendable {
    private let uplink: Uplink

    init(_ uplink: Uplink) { self.uplink = uplink }

    /// An attempt now; returns once it is over.
    func now() async { await uplink.flush() }

    /// The shift ended: what it recorded goes now, in one burst (pings below a batch's size too).
    func shiftEnd() async { await uplink.flushShiftEnd() }
}
