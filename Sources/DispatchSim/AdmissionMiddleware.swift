import BackendContract
import DispatchSimCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The admission desk with its clock and the connections it has taken, lock-guarded (every API request asks it).
final class AdmissionControl: Sendable {
    private struct State {
        var desk: AdmissionDesk
        /// Connections whose first request was taken: their later requests are not new connections.
        var admitted: Set<ObjectIdentifier> = []
    }

    private let state: Mutex<State>

    init(limits: AdmissionLimits) { state = Mutex(State(desk: AdmissionDesk(limits: limits))) }

    var desk: AdmissionDesk { state.withLock { $0.desk } }

    func set(_ limits: AdmissionLimits) { state.withLock { $0.desk.set(limits) } }

    func outage(forSeconds seconds: Double) { state.withLock { $0.desk.outage(forSeconds: seconds, now: SimState.now()) } }

    /// A connection closed unanswered while connections are refused.
    func refusedUnanswered() { state.withLock { $0.desk.refusedUnanswered(now: SimState.now()) } }

    /// The verdict on a request arriving on `channel`; a taken new connection is remembered until it closes.
    func admit(on channel: any Channel) -> AdmissionDesk.Verdict {
        let id = ObjectIdentifier(channel)
        let (verdict, taken) = state.withLock { state -> (AdmissionDesk.Verdict, Bool) in
            let isNew = !state.admitted.contains(id)
            let verdict = state.desk.admit(newConnection: isNew, now: SimState.now())
            guard verdict == .accept, isNew else { return (verdict, false) }
            state.admitted.insert(id)
            return (verdict, true)
        }
        // Forgotten when it closes (outside the lock: the close may come on this thread at once).
        if taken { channel.closeFuture.whenComplete { [self] _ in _ = state.withLock { $0.admitted.remove(id) } } }
        return verdict
    }
}

/// Admission control on API requests (the dispatcher's /sim/ never): what the desk does not take is answered
/// 429 or 503 with `Retry-After` and its connection closed, so the client's next try is a new connection again.
struct AdmissionMiddleware: RouterMiddleware {
    typealias Context = SimContext
    let admission: AdmissionControl

    func handle(_ request: Request, context: SimContext, next: (Request, SimContext) async throws -> Response) async throws -> Response {
        // A WebSocket upgrade was judged before the router (UpgradeGate).
        guard request.uri.path.hasPrefix("/api/"), !UpgradeGate.isUpgrade(request.headers[.upgrade]) else { return try await next(request, context) }
        if let refusal = Self.refusal(admission.admit(on: context.channel)) { throw refusal }
        return try await next(request, context)
    }

    /// The answer to a request the desk did not take, nil when it was taken.
    static func refusal(_ verdict: AdmissionDesk.Verdict) -> SimHTTPError? {
        guard case .refuse(let status, let retryAfter) = verdict else { return nil }
        var error = SimHTTPError(status == 429 ? .overloaded : .unavailable, "the backend takes no more now: retry after \(retryAfter) s")
        error.headers[.retryAfter] = "\(retryAfter)"
        error.headers[.connection] = "close"
        return error
    }
}
