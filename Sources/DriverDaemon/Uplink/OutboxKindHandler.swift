import BackendClient
import DriverAPI
import DriverStore

/// One kind of queued item: how it goes to the backend, and its owner's part in the outcome. The owner that queues a
/// kind registers a handler for it with the uplink (`Uplink.register(_:_:)`), one a kind; the uplink sends the queue
/// in order, decides each outcome by `OutboxOutcomePolicy` and calls the handler. Called from the uplink's loop,
/// which waits for each call, so the store is up to date before the next item of the same lane is read.
struct OutboxKindHandler: Sendable {
    /// Sends one item; returns the status the backend applied when its answer names one (a transition's), or nil.
    let send: @Sendable (_ item: OutboxItemRecord, _ client: any BackendAPI, _ token: String) async throws -> TaskStatus?
    /// The backend took the item. It is still queued, and leaves when this returns: a sync merged in between sees the
    /// queue or the confirmed state, never a gap that looks like neither.
    let acknowledged: @Sendable (_ item: OutboxItemRecord, _ applied: TaskStatus?) async -> Void
    /// The backend refused the item for good: it is already a dead letter, and front ends were told.
    let refused: @Sendable (_ item: OutboxItemRecord, _ refusal: BackendRefusal) async -> Void
    /// The item left the queue (committed, perhaps not yet on disk): what the item needed until then, a spooled file,
    /// may go now. Never earlier: an item still queued after a crash or a power cut is sent again, and needs it.
    let completed: @Sendable (_ item: OutboxItemRecord) async -> Void

    init(
        send: @escaping @Sendable (OutboxItemRecord, any BackendAPI, String) async throws -> TaskStatus?,
        acknowledged: @escaping @Sendable (OutboxItemRecord, TaskStatus?) async -> Void = { _, _ in },
        refused: @escaping @Sendable (OutboxItemRecord, BackendRefusal) async -> Void = { _, _ in },
        completed: @escaping @Sendable (OutboxItemRecord) async -> Void = { _ in }
    ) {
        self.send = send
        self.acknowledged = acknowledged
        self.refused = refused
        self.completed = completed
    }

    /// A record the backend keeps under its idempotency key at `path` (activity, answers, alerts): nothing comes back.
    static func posting(
        to path: String, acknowledged: @escaping @Sendable (OutboxItemRecord, TaskStatus?) async -> Void = { _, _ in }
    ) -> OutboxKindHandler {
        OutboxKindHandler(send: { item, client, token in
            _ = try await client.postActivity(path: path, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            return nil
        }, acknowledged: acknowledged)
    }
}
