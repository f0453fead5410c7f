import BackendClient
import DriverAPI
import DriverStore

/// The owner of some outbox kinds: it queued their items, knows how the backend takes them, and handles their
/// outcomes. Each owner registers its kinds with the uplink (`Uplink.register(_:for:)`); the uplink sends the
/// queue in order, decides each outcome by `OutboxOutcomePolicy` and tells the owner. Called from the uplink's
/// loop, which waits for each call, so the store is up to date before the next item of the same lane is read.
protocol OutboxItemOwner: Sendable {
    /// Sends one item; returns the status the backend applied (a transition's answer names it), or nil.
    func send(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> TaskStatus?
    /// The backend took the item. It is still queued, and leaves when this returns: a sync merged in between
    /// sees the queue or the confirmed state, never a gap that looks like neither.
    func acknowledged(_ item: OutboxItemRecord, applied: TaskStatus?) async
    /// The backend refused the item for good: it is already a dead letter, and front ends were told.
    func refused(_ item: OutboxItemRecord, refusal: BackendRefusal) async
}

extension OutboxItemOwner {
    func acknowledged(_ item: OutboxItemRecord, applied: TaskStatus?) async {}
    func refused(_ item: OutboxItemRecord, refusal: BackendRefusal) async {}
}
