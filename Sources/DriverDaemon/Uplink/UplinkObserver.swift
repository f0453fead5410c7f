import BackendClient
import BackendContract
import DriverAPI
import DriverStore

/// What the uplink tells the workflow: answers to queued items, pushes, and the link coming back (a sync is
/// due). Called from the uplink's loop, which waits for each call, so the store is up to date before the
/// next item of the same task is read.
protocol UplinkObserver: Sendable {
    /// The backend took the item (still in the outbox: it goes when this returns); `appliedStatus` is a
    /// transition's status as the backend's answer names it (not read from the queued body again).
    func itemAcked(_ item: OutboxItemRecord, appliedStatus: TaskStatus?) async
    /// The backend refused the item for good (it is already a dead letter).
    func itemRefused(_ item: OutboxItemRecord, refusal: BackendRefusal) async
    /// A photo upload's progress.
    func uploadProgress(_ item: OutboxItemRecord, sent: Int, total: Int)
    func pushReceived(_ push: Push) async
    /// The first success after start or after the link was down.
    func linkRestored() async
}
