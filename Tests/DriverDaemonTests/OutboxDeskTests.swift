import DriverAPI
import Testing

@testable import DriverDaemon

/// `driverctl queue`'s error line: a certificate the backend refuses is said as that, not as the transport's error.
@Suite("Outbox desk")
struct OutboxDeskTests {
    static let now = 1_796_500_000.0

    static func identity(_ state: UnitIdentityStatus.State, notAfter: Double? = now + 86400, reason: String? = nil) -> UnitIdentityStatus {
        UnitIdentityStatus(state: state, subject: "CN=unit", serial: "01", notAfter: notAfter, reason: reason)
    }

    @Test("the last error names the certificate when it is the cause, and only then")
    func lastErrorByCause() {
        let reset = "HTTPClientError.remoteConnectionClosed"
        func said(_ identity: UnitIdentityStatus?, error: String? = reset, trusted: Bool = true) -> String? {
            OutboxDesk.lastError(error, identity: identity, now: Self.now, clockTrusted: trusted)
        }
        #expect(said(Self.identity(.enrolled, notAfter: Self.now - 60))
            == "the unit's certificate expired at 2026-12-05T19:45:40Z: the backend refuses this unit until it is renewed (the last attempt: \(reset))")
        #expect(said(Self.identity(.revoked)) == "the fleet revoked this unit's certificate (the last attempt: \(reset))")
        #expect(said(Self.identity(.refused, notAfter: nil, reason: "unknown claim token"))
            == "the backend refused this unit's certificate: unknown claim token; check backend.claim_token (the last attempt: \(reset))")
        // Not the certificate: the transport's words stand.
        #expect(said(Self.identity(.enrolled)) == reset, "a certificate in force")
        #expect(said(Self.identity(.enrolled, notAfter: Self.now - 60), trusted: false) == reset, "an unsynced clock cannot tell an expiry")
        #expect(said(nil) == reset, "no certificate: username and password")
        #expect(said(Self.identity(.revoked), error: nil) == nil, "nothing failed: no error line")
    }
}
