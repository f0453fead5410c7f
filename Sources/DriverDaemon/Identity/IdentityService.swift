import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import Logging
import ServiceLifecycle
import Synchronization

/// The unit's identity over its life: enrolment with the fleet's claim token, once (a CSR for the unit's key; the
/// chain the backend answers is kept and presented from then on), then renewal at a random point between 50 % and
/// 80 % of each certificate's life (`CertificateRenewal`, judged on a trusted clock only), proven by the same key so
/// that it works after expiry too. Until enrolment, requests go without a certificate (a backend that asks for one
/// answers `CERTIFICATE_REQUIRED`, and the uplink waits an hour, or until a certificate is issued: nothing queued is
/// lost). A refused token, or a revoked certificate, is tried again hourly (a person must act); a backend that is
/// away, with backoff, cut short by any request the backend takes (after a random share of the fleet's spread window),
/// and every 10 to 20 s once the certificate in force has expired (`CertificateRenewal.retryWait`).
struct IdentityService: Service {
    let identity: UnitIdentity
    let claimToken: String
    let client: BackendClient
    let webSocket: WebSocketLink?
    let clock: DaemonClock
    /// Signalled when the clock becomes trusted (the renewal judges again at once).
    let wakeup: Wakeup
    /// The fleet's spread window (seconds; `uplink.fleet_size` / `uplink.backend_connect_rate`): a renewal the backend's
    /// return woke goes after a random share of it, so a fleet back from an outage does not renew in one instant.
    let spreadWindow: Double
    /// Set when a request's success woke a waiting renewal (the backend is back).
    private let backendReturned = BackendReturned()
    let logger: Logger

    init(
        identity: UnitIdentity, claimToken: String, client: BackendClient, webSocket: WebSocketLink?, clock: DaemonClock, spreadWindow: Double,
        logger: Logger
    ) {
        self.spreadWindow = spreadWindow
        self.identity = identity
        self.claimToken = claimToken
        self.client = client
        self.webSocket = webSocket
        self.clock = clock
        self.logger = logger
        let wakeup = clock.wakeup()
        self.wakeup = wakeup
        clock.whenSourceChanges { _, to, _ in if to != .unsynced { wakeup.signal() } }
        // Any call may be the first to hear that the fleet revoked this unit; the journal says it once.
        client.whenUnitRevoked { error in
            guard identity.refused(error.reason, revoked: true) else { return }
            Self.logRefusal(error, revoked: true, enrolled: true, logger: logger)
        }
        // A renewal or enrolment waiting out a backoff goes when any request gets through: the backend is back.
        client.whenRequestSucceeds { [backendReturned] in
            guard identity.awaitsAnswer else { return }
            backendReturned.heard.withLock { $0 = true }
            wakeup.signal()
        }
    }

    /// A refusal (claim token, revoked certificate): asked again this often (seconds).
    static let refusedRetry = 3600.0
    /// The longest sleep before the schedule is judged again: a wall clock that steps moves the renewal's time, and
    /// each look wakes a sleeping unit, so rarely (the clock becoming trusted wakes the service at once).
    static let recheck = 6 * 3600.0

    func run() async {
        await cancelWhenGracefulShutdown { await live() }
    }

    private func live() async {
        var failures = 0
        var schedule: CertificateRenewal?
        while !Task.isCancelled {
            let wait: Double
            do {
                guard let facts = identity.facts else {
                    guard !claimToken.isEmpty else { return }  // not enrolled, and no way to: username/password only
                    try await enrol()
                    failures = 0
                    continue
                }
                let current = schedule ?? CertificateRenewal(notBefore: facts.notBefore, notAfter: facts.notAfter, random: Double.random(in: 0..<1))
                schedule = current
                let now = clock.now()
                switch current.decide(now: now.time, clockTrusted: now.source != .unsynced) {
                case .waitForTrustedClock:
                    wait = Self.recheck
                case .waitUntil(let time):
                    wait = min(max(time - now.time, 1), Self.recheck)
                case .renewNow:
                    try await renew()
                    schedule = nil
                    failures = 0
                    continue
                }
            } catch let error as BackendClientError where error.errorClass == .refused || error.body?.error.code == .unitRevoked {
                let revoked = error.body?.error.code == .unitRevoked
                if identity.refused(error.reason, revoked: revoked) {
                    Self.logRefusal(error, revoked: revoked, enrolled: identity.facts != nil, logger: logger)
                }
                wait = Self.refusedRetry
            } catch {
                let now = clock.now(), random = Double.random(in: 0..<1)
                // An expired certificate is named by the status itself (`UnitIdentity.status(at:)`).
                identity.notAnswered("\(error)")
                logger.warning("the unit's certificate not \(identity.facts == nil ? "issued" : "renewed") yet: \(error)")
                wait = schedule?.retryWait(failures: failures, now: now.time, clockTrusted: now.source != .unsynced, random: random)
                    ?? max(1, CertificateRenewal.backoff.delay(attempt: failures, random: random))
                failures += 1
            }
            await wakeup.wait(until: clock.monotonic + wait)
            if backendReturned.heard.withLock({ heard in defer { heard = false }; return heard }), spreadWindow > 0 {
                await wakeup.wait(until: clock.monotonic + spreadWindow * Double.random(in: 0..<1))
            }
        }
    }

    private static func logRefusal(_ error: BackendClientError, revoked: Bool, enrolled: Bool, logger: Logger) {
        let what = revoked
            ? "the fleet revoked this unit's certificate: \(error.reason)"
            : enrolled ? "renewal refused: \(error.reason)" : "enrolment refused: \(error.reason); check backend.claim_token"
        logger.error(
            "\(what) (calls wait an hour at a time, an SOS excepted; everything queued stays)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.unitIdentity.rawValue)"])
    }

    private func enrol() async throws {
        let answer = try await client.enrol(EnrolmentRequest(claimToken: claimToken, csr: try identity.certificateSigningRequest()))
        try keep(answer, "enrolled: the unit presents its own certificate from now on (its key: \(identity.keyStore.description))")
    }

    /// With the same key; again with a new one when the fleet asks for it (`KEY_ROTATION_REQUIRED`).
    private func renew() async throws {
        do {
            try await renew(rotating: false)
        } catch let error as BackendClientError where error.body?.error.code == .keyRotationRequired {
            logger.notice("the fleet asks for a new key: renewing with one made now (\(error.reason))")
            try await renew(rotating: true)
        }
    }

    private func renew(rotating: Bool) async throws {
        guard let request = try identity.renewalRequest(rotating: rotating) else { return }
        let answer = try await client.renew(request)
        try keep(answer, "renewed: the unit presents its new certificate")
    }

    private func keep(_ answer: IssuedCertificate, _ message: Logger.Message) throws {
        let kept = try identity.store(chain: answer.certificateChain)
        let facts = kept.facts
        try Self.present(identity, client: client, webSocket: webSocket)
        logger.notice(
            kept.rotated ? "renewed with a new key: the unit presents its new certificate; the old key is gone" : message,
            metadata: [
                DaemonLogHandler.messageIDKey: "\(MessageID.unitIdentity.rawValue)",
                "subject": "\(facts.subject)", "serial": "\(facts.serial)", "not_after": "\(Int(facts.notAfter))",
            ])
    }

    /// Both clients present the unit's certificate, when it has one; false when it has none yet.
    @discardableResult
    static func present(_ identity: UnitIdentity, client: BackendClient, webSocket: WebSocketLink?) throws -> Bool {
        guard let clientIdentity = try identity.clientIdentity() else { return false }
        // The WebSocket first: the client's presenting tells the uplink (`whenIdentityPresented`), whose socket then
        // reconnects at once, and must do so with the new certificate (with the old one: a 403 and an hour's wait).
        try webSocket?.present(clientIdentity)
        try client.present(clientIdentity)
        return true
    }
}

/// Shared by the service's copies and the client's success listener.
private final class BackendReturned: Sendable {
    let heard = Mutex(false)
}
