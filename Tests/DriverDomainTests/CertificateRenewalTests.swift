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
}
