import DriverAPI
import DriverDomain
import Testing

/// The rules an office reads a fleet by: each case a unit's report (and what the backend knows), the findings in
/// order, worst first.
@Suite("Health rules")
struct HealthRulesTests {
    static let now = 1_796_500_000.0

    static func healthy(_ change: (inout UnitHealth) -> Void = { _ in }) -> UnitHealth {
        var health = UnitHealth(
            generatedAt: now, timeSource: .ntp, daemonVersion: "0.2.0", kioskVersion: "0.2.0", bootId: "b", uptimeSeconds: 3600, onShift: true,
            restarts: [], store: StoreStatus(condition: .ok, path: "/var/lib/driverd", freeBytes: 1 << 30, reserveBytes: 4 << 20),
            queue: UnitHealth.Queue(items: 0, pings: 3, deadLetters: 0, oldestAgeSeconds: 4), gps: UnitHealth.GPS(link: .connected, lastFixAgeSeconds: 1),
            clockSource: .ntp, certificate: UnitHealth.Certificate(state: .enrolled, notAfter: now + 60 * 86400, reason: nil), vehicle: nil,
            frontEnds: 1, remoteConfigVersion: nil, logCounts: [:], peakRSSKiB: 20000, nextReportWithin: 1860)
        change(&health)
        return health
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let health: UnitHealth
        var lastHeard: Double? = nil
        var fleetRelease: String? = nil
        let rules: [HealthFinding.Rule]
        var words: String? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "healthy, heard a minute ago, on the fleet's release", health: healthy(), lastHeard: now - 60, fleetRelease: "0.2.0", rules: []),
        Case(name: "silent past its promise and the grace", health: healthy(), lastHeard: now - 1860 - 61, rules: [.silent], words: "silent for 32 min (it promised a report within 31 min)"),
        Case(name: "quiet within its promise is not silent", health: healthy(), lastHeard: now - 1860, rules: []),
        Case(name: "the unit's own view is never silent", health: healthy(), rules: []),
        Case(name: "a full store that cannot save", health: healthy { $0.store = StoreStatus(condition: .full, path: "/var/lib/driverd", freeBytes: 0, reserveBytes: 4 << 20, reserveInUse: true) },
             rules: [.storeFull], words: "storage full (0.0 MB free): this unit cannot save; free space on /var/lib/driverd"),
        Case(name: "read-only", health: healthy { $0.store = StoreStatus(condition: .readOnly, path: "/d", freeBytes: 100) }, rules: [.storeReadOnly]),
        Case(name: "failing", health: healthy { $0.store = StoreStatus(condition: .failing, path: "/d", freeBytes: 100) }, rules: [.storeFailing]),
        Case(name: "nearly full is a notice", health: healthy { $0.store = StoreStatus(condition: .nearlyFull, path: "/d", freeBytes: 5 << 20) }, rules: [.storeNearlyFull]),
        Case(name: "a queue older than an hour", health: healthy { $0.queue = .init(items: 2, pings: 900, deadLetters: 0, oldestAgeSeconds: 7300) },
             rules: [.queueOld], words: "changes waiting to be sent for 2 h (2 items, 900 pings)"),
        Case(name: "an old but empty queue reading is nothing", health: healthy { $0.queue = .init(items: 0, pings: 0, deadLetters: 0, oldestAgeSeconds: 7300) }, rules: []),
        Case(name: "a certificate expiring in 3 days", health: healthy { $0.certificate?.notAfter = now + 3 * 86400 }, rules: [.certificateExpiring],
             words: "the unit's certificate expires in 3 days"),
        Case(name: "a certificate expired", health: healthy { $0.certificate?.notAfter = now - 7200 }, rules: [.certificateExpiring],
             words: "the unit's certificate expired 2 h ago and is not renewed"),
        Case(name: "a certificate refused", health: healthy { $0.certificate = .init(state: .refused, notAfter: nil, reason: "unknown claim token") },
             rules: [.certificateRefused]),
        Case(name: "three crashes in a day", health: healthy { $0.restarts = (1...3).map { .init(startedAt: now - Double($0) * 600, cause: .crash) } },
             rules: [.restarting], words: "restarted 3 times in 24 h without a clean stop (3 crashes)"),
        Case(name: "clean stops, updates and configurations are not restarts", health: healthy {
            $0.restarts = [.init(startedAt: now - 600, cause: .cleanStop), .init(startedAt: now - 500, cause: .update), .init(startedAt: now - 400, cause: .configuration)]
        }, rules: []),
        Case(name: "a crash yesterday is past", health: healthy { $0.restarts = [.init(startedAt: now - 90000, cause: .crash)] }, rules: []),
        Case(name: "gpsd gone on shift", health: healthy { $0.gps = .init(link: .lost, lastFixAgeSeconds: 400) }, rules: [.gpsLost],
             words: "no GPS position for 7 min on shift: no receiver (gpsd)"),
        Case(name: "gpsd gone off shift is nothing", health: healthy { $0.gps = .init(link: .lost, lastFixAgeSeconds: nil); $0.onShift = false }, rules: []),
        Case(name: "a fix a minute old is fine", health: healthy { $0.gps = .init(link: .noFix, lastFixAgeSeconds: 60) }, rules: []),
        Case(name: "just started, still finding gpsd, is not lost", health: healthy { $0.gps = .init(link: .connecting, lastFixAgeSeconds: nil); $0.uptimeSeconds = 5 }, rules: []),
        Case(name: "never a fix in ten minutes on shift", health: healthy { $0.gps = .init(link: .lost, lastFixAgeSeconds: nil); $0.uptimeSeconds = 600 }, rules: [.gpsLost],
             words: "no GPS position on shift: no receiver (gpsd)"),
        Case(name: "dead letters", health: healthy { $0.queue.deadLetters = 2 }, rules: [.deadLetters]),
        Case(name: "a release behind is a notice", health: healthy(), fleetRelease: "0.3.0", rules: [.releaseBehind]),
        Case(name: "worst first: notices after attention, in the rules' order", health: healthy {
            $0.store = StoreStatus(condition: .nearlyFull, path: "/d", freeBytes: 5 << 20)
            $0.queue.deadLetters = 1
            $0.gps = .init(link: .lost, lastFixAgeSeconds: 1000)
        }, lastHeard: now - 4000, fleetRelease: "0.3.0", rules: [.silent, .gpsLost, .deadLetters, .storeNearlyFull, .releaseBehind]),
    ]

    @Test("each rule fires on its case and on no other", arguments: cases)
    func table(_ item: Case) {
        let findings = HealthRules.findings(item.health, now: Self.now, lastHeard: item.lastHeard, fleetRelease: item.fleetRelease)
        #expect(findings.map(\.rule) == item.rules)
        if let words = item.words { #expect(findings.first?.words == words) }
        #expect(findings.allSatisfy { !$0.words.isEmpty })
    }

    @Test("the driver hears only what they can act on, as \"call the office\"")
    func forDriver() {
        let said: [(String, UnitHealth, Bool)] = [
            ("a store that cannot save", Self.healthy { $0.store = StoreStatus(condition: .full, path: "/d", freeBytes: 0) }, true),
            ("a full store whose reserve still saves the next change", Self.healthy { $0.store = StoreStatus(condition: .full, path: "/d", freeBytes: 0, reserveBytes: 4 << 20) }, false),
            ("read-only", Self.healthy { $0.store = StoreStatus(condition: .readOnly, path: "/d", freeBytes: 100) }, true),
            ("nearly full: the office's business", Self.healthy { $0.store = StoreStatus(condition: .nearlyFull, path: "/d", freeBytes: 5 << 20) }, false),
            ("no receiver on shift", Self.healthy { $0.gps = .init(link: .lost, lastFixAgeSeconds: 1000) }, true),
            ("a receiver without a fix (the sky's, it passes)", Self.healthy { $0.gps = .init(link: .noFix, lastFixAgeSeconds: 1000) }, false),
            ("a certificate refused", Self.healthy { $0.certificate = .init(state: .refused, notAfter: nil, reason: "unknown claim token") }, true),
            ("a certificate revoked", Self.healthy { $0.certificate = .init(state: .revoked, notAfter: nil, reason: nil) }, true),
            ("a certificate expired", Self.healthy { $0.certificate?.notAfter = Self.now - 60 }, true),
            ("a certificate expiring: renewal's business", Self.healthy { $0.certificate?.notAfter = Self.now + 86400 }, false),
            ("changes the backend refused", Self.healthy { $0.queue.deadLetters = 1 }, true),
            ("a queue an hour old: the link's, nothing to do", Self.healthy { $0.queue = .init(items: 2, pings: 9, deadLetters: 0, oldestAgeSeconds: 7300) }, false),
            ("crashes", Self.healthy { $0.restarts = (1...3).map { .init(startedAt: Self.now - Double($0) * 600, cause: .crash) } }, false),
        ]
        for (name, health, expected) in said {
            let findings = HealthRules.findings(health, now: Self.now)
            #expect(findings.count == 1, "\(name)")
            #expect(findings.map(\.forDriver) == [expected], "\(name)")
        }
    }
}
