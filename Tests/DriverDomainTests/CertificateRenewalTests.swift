import DriverDomain
import Testing

@Suite("Certificate renewal")
struct CertificateRenewalTests {
    let issued = 1_800_000_000.0
    let life = 30 * 86400.0

    @Test("renewal falls between 50 % and 80 % of the life, spread by the unit's draw", arguments: [0.0, 0.25, 0.5, 0.999_999])
    func window(random: Double) {
        let renewal = CertificateRenewal(notBefore: issued, notAfter: issued + life, random: random)
        #expect(renewal.renewAt >= issued + 0.5 * life && renewal.renewAt < issued + 0.8 * life)
        #expect(abs(renewal.renewAt - (issued + life * (0.5 + 0.3 * random))) < 1e-6)
    }

    @Test("on a trusted clock: wait until the point, then renew (and after expiry too: the same key proves the unit)")
    func trusted() {
        let renewal = CertificateRenewal(notBefore: issued, notAfter: issued + life, random: 0.5)
        #expect(renewal.decide(now: issued + 86400, clockTrusted: true) == .waitUntil(renewal.renewAt))
        #expect(renewal.decide(now: renewal.renewAt, clockTrusted: true) == .renewNow)
        #expect(renewal.decide(now: issued + 60 * 86400, clockTrusted: true) == .renewNow)
    }

    @Test("on an untrusted clock (1970 or 2040) nothing is judged: neither not yet valid nor expired")
    func untrusted() {
        let renewal = CertificateRenewal(notBefore: issued, notAfter: issued + life, random: 0.5)
        #expect(renewal.decide(now: 0, clockTrusted: false) == .waitForTrustedClock)
        #expect(renewal.decide(now: 2_208_988_800, clockTrusted: false) == .waitForTrustedClock)
        #expect(renewal.decide(now: 2_208_988_800, clockTrusted: true) == .renewNow)
    }

    @Test("10,000 units enrolled in one hour renew over the whole window, not in one hour")
    func fleetSpread() {
        var random = SplitMix64(seed: 7)
        let times = (0..<10_000).map { _ in
            CertificateRenewal(notBefore: issued + random.nextUnit() * 3600, notAfter: issued + life, random: random.nextUnit()).renewAt
        }
        var perHour: [Int: Int] = [:]
        for time in times { perHour[Int((time - issued) / 3600), default: 0] += 1 }
        // The window is 9 days (216 hours): about 46 an hour, none near 10,000.
        #expect(perHour.values.max()! < 100)
    }
    @Test("a failed renewal backs off from 5 s to 10 min while the certificate is good, never past its expiry; once expired, every 10 to 20 s")
    func retryWaits() {
        let renewal = CertificateRenewal(notBefore: 0, notAfter: 90, random: 0.5)
        #expect(renewal.retryWait(failures: 0, now: 50, clockTrusted: true, random: 1) == 5)
        #expect(renewal.retryWait(failures: 3, now: 50, clockTrusted: true, random: 1) == 40)
        // The backoff would reach 80 s: it stops at the expiry, where the rule changes.
        #expect(renewal.retryWait(failures: 4, now: 50, clockTrusted: true, random: 1) == 40)
        #expect(renewal.retryWait(failures: 9, now: 90, clockTrusted: true, random: 0) == 10)
        #expect(renewal.retryWait(failures: 9, now: 7200, clockTrusted: true, random: 1) == 20)
        // An untrusted clock judges nothing: the plain backoff, at least a second.
        #expect(renewal.retryWait(failures: 9, now: 7200, clockTrusted: false, random: 1) == 600)
        #expect(renewal.retryWait(failures: 0, now: 50, clockTrusted: false, random: 0) == 1)
        #expect(renewal.hasExpired(now: 90, clockTrusted: true) && !renewal.hasExpired(now: 90, clockTrusted: false))
    }

    @Test("a certificate that expired while the backend was away (2 min and 2 h) is renewed within 20 s of its return, in 100 runs of 100 (virtual time)")
    func renewedAfterOutage() {
        for outage in [120.0, 7200.0] {
            var random = SplitMix64(seed: UInt64(outage))
            var late: [Double] = []
            for _ in 0..<100 {
                // 90-s certificates; the backend goes away before the renewal's point and comes back after the expiry.
                let renewal = CertificateRenewal(notBefore: 0, notAfter: 90, random: random.nextUnit())
                let away = 40.0, back = away + outage
                var now = renewal.renewAt, failures = 0
                while now >= away && now < back {
                    now += renewal.retryWait(failures: failures, now: now, clockTrusted: true, random: random.nextUnit())
                    failures += 1
                }
                late.append(now - back)
            }
            #expect(late.allSatisfy { $0 <= 20 }, "outage \(outage) s: renewed up to \(late.max() ?? 0) s after the return")
        }
    }
}
