import BackendClient
import BackendContract
import DriverDomain
import Logging
import ServiceLifecycle

/// Enrolment with the fleet's claim token, once per unit: a CSR for the unit's key goes to the backend, the chain it
/// answers is kept and presented from then on. Until then requests go without a certificate (a backend that asks
/// for one answers them `CERTIFICATE_REQUIRED`, which the uplink retries: nothing queued is lost). A refused token
/// is tried again hourly (a person must act: a new token in the configuration); a backend that is away, with the
/// uplink's backoff. Service-lifecycle runs it; it ends once the unit is enrolled.
struct Enrolment: Service {
    let identity: UnitIdentity
    let claimToken: String
    let client: BackendClient
    let webSocket: WebSocketLink?
    let clock: DaemonClock
    let logger: Logger

    /// A claim token refused: asked again this often (seconds).
    static let refusedRetry = 3600.0
    static let backoff = Backoff(base: 5, cap: 600)

    func run() async {
        await cancelWhenGracefulShutdown { await enrol() }
    }

    private func enrol() async {
        var failures = 0
        while !Task.isCancelled {
            let wait: Double
            do {
                let csr = try identity.certificateSigningRequest()
                let answer = try await client.enrol(EnrolmentRequest(claimToken: claimToken, csr: csr))
                let facts = try identity.store(chain: answer.certificateChain)
                try Self.present(identity, client: client, webSocket: webSocket)
                logger.notice(
                    "enrolled: the unit presents its own certificate from now on",
                    metadata: [
                        DaemonLogHandler.messageIDKey: "\(MessageID.unitIdentity.rawValue)",
                        "subject": "\(facts.subject)", "serial": "\(facts.serial)", "not_after": "\(Int(facts.notAfter))",
                    ])
                return
            } catch let error as BackendClientError where error.errorClass == .refused {
                identity.enrolmentFailed(error.reason, refused: true)
                logger.error(
                    "enrolment refused: \(error.reason); check backend.claim_token (tried again in an hour, everything queued stays)",
                    metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.unitIdentity.rawValue)"])
                wait = Self.refusedRetry
            } catch {
                identity.enrolmentFailed("\(error)", refused: false)
                logger.warning("enrolment not done yet: \(error)")
                wait = Self.backoff.delay(attempt: failures, random: Double.random(in: 0..<1))
                failures += 1
            }
            do {
                try await clock.sleep(for: wait)
            } catch {
                return  // cancelled: the daemon stops
            }
        }
    }

    /// Both clients present the unit's certificate, when it has one; false when it has none yet.
    @discardableResult
    static func present(_ identity: UnitIdentity, client: BackendClient, webSocket: WebSocketLink?) throws -> Bool {
        guard let clientIdentity = try identity.clientIdentity() else { return false }
        try client.present(clientIdentity)
        try webSocket?.present(clientIdentity)
        return true
    }
}
