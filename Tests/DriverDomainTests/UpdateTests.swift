import DriverDomain
import Testing

@Suite("Self-update: versions, the maintenance window, the health gate")
struct UpdateTests {
    @Test("Debian versions order as dpkg --compare-versions orders them")
    func debianVersions() throws {
        // Each is lower than the next (checked against dpkg --compare-versions on Debian 12).
        let ordered = ["0.9", "1.0~rc1", "1.0", "1.0-1", "1.0-1.1", "1.0+fix", "1.0.1~beta", "1.0.1", "1.0.10", "1.2a", "1.2b", "1.10", "1:0.1"]
        let versions = try ordered.map { try #require(DebianVersion($0), "\($0)") }
        for (lower, higher) in zip(versions, versions.dropFirst()) {
            #expect(lower < higher, "\(lower) < \(higher)")
            #expect(!(higher < lower))
        }
        #expect(DebianVersion("1.0") == DebianVersion("1.0-0"))
        #expect(DebianVersion("01.0") == DebianVersion("1.0"))
        #expect(DebianVersion("0:2.5")?.description == "2.5")
        for bad in ["", "abc", "1.0-", "x:1.0", "1.0 beta", "-1:1.0", "1.0/2"] { #expect(DebianVersion(bad) == nil, "\(bad)") }
    }

    static let situation = MaintenanceWindow.Situation(onShift: true, moving: false, ignitionOffSeconds: nil, hour: 12, tasksInProgress: 0, queuedItems: 0)

    @Test("installed off shift, parked with the ignition off long enough, or in the daily hours; never moving, mid-task or with items queued")
    func window() {
        let window = MaintenanceWindow(quietMinutes: 30, hours: MaintenanceWindow.Hours.parse("22-4")!)
        var s = Self.situation
        if case .wait(let reason) = window.decide(s) { #expect(reason.contains("30 min") && reason.contains("22-4")) } else { Issue.record("installs on shift at noon") }
        s.ignitionOffSeconds = 29 * 60
        #expect(window.decide(s) != .install)
        s.ignitionOffSeconds = 30 * 60
        #expect(window.decide(s) == .install)
        s.ignitionOffSeconds = nil
        s.hour = 23
        #expect(window.decide(s) == .install)
        s.hour = 3
        #expect(window.decide(s) == .install)
        s.hour = 4
        #expect(window.decide(s) != .install)
        s.onShift = false
        #expect(window.decide(s) == .install)
        var blocked = s
        blocked.moving = true
        #expect(window.decide(blocked) == .wait("the vehicle is moving"))
        blocked = s
        blocked.tasksInProgress = 1
        #expect(window.decide(blocked) == .wait("1 task(s) in progress"))
        blocked = s
        blocked.queuedItems = 2
        #expect(window.decide(blocked) == .wait("2 item(s) wait for the backend"))
        #expect(MaintenanceWindow.Hours.parse("") == .some(nil))
        for bad in ["5", "5-5", "24-2", "a-b", "1-2-3"] { #expect(MaintenanceWindow.Hours.parse(bad) == nil, "\(bad)") }
        #expect(MaintenanceWindow.Hours(start: 2, end: 5).contains(hour: 2) && !MaintenanceWindow.Hours(start: 2, end: 5).contains(hour: 5))
    }

    static func probe(running: Bool = true, crashed: Bool = false, exited: Bool = false, pid: Int = 100, answers: Bool = true, online: Bool = true)
        -> HealthGate.Probe {
        HealthGate.Probe(running: running, crashed: crashed, exited: exited, mainPID: pid, answers: answers, backendOnline: online)
    }

    @Test("a healthy daemon is committed after its healthy run, not before")
    func gateCommits() {
        var gate = HealthGate(settings: .init(healthySeconds: 60, backendRequired: true), installedAt: 1000)
        #expect(gate.observe(Self.probe(running: false, answers: false, online: false), at: 1001) == .wait)
        #expect(gate.observe(Self.probe(online: false), at: 1005) == .wait)
        #expect(gate.observe(Self.probe(), at: 1030) == .wait)
        #expect(gate.observe(Self.probe(), at: 1064) == .wait)
        #expect(gate.observe(Self.probe(), at: 1065) == .commit)
        // Decided once: a later crash is the next update's business.
        #expect(gate.observe(Self.probe(crashed: true), at: 1070) == .commit)
    }

    @Test("each way to fail has its reason")
    func gateRollsBack() {
        let settings = HealthGate.Settings(healthySeconds: 60, readyWithin: 90, backendRequired: true)
        var gate = HealthGate(settings: settings, installedAt: 0)
        #expect(gate.observe(Self.probe(running: false, crashed: true, exited: true, answers: false), at: 3) == .rollBack(.crashAtStart))

        gate = HealthGate(settings: settings, installedAt: 0)
        _ = gate.observe(Self.probe(pid: 100), at: 5)
        #expect(gate.observe(Self.probe(pid: 130), at: 20) == .rollBack(.crashLoop))

        gate = HealthGate(settings: settings, installedAt: 0)
        _ = gate.observe(Self.probe(), at: 5)
        #expect(gate.observe(Self.probe(running: false, crashed: true), at: 20) == .rollBack(.crashLoop))

        gate = HealthGate(settings: settings, installedAt: 0)
        #expect(gate.observe(Self.probe(running: false, answers: false), at: 89) == .wait)
        #expect(gate.observe(Self.probe(running: false, answers: false), at: 90) == .rollBack(.noReady))

        // dpkg's postinst waited for the start until systemd's start timeout (past the limit): the first look
        // says no READY, whether systemd waits to start it again or has already.
        gate = HealthGate(settings: settings, installedAt: 0)
        #expect(gate.observe(Self.probe(running: false, crashed: true, answers: false), at: 93) == .rollBack(.noReady))
        gate = HealthGate(settings: settings, installedAt: 0)
        #expect(gate.observe(Self.probe(running: true, answers: true), at: 93) == .wait)
        gate = HealthGate(settings: settings, installedAt: 0)
        #expect(gate.observe(Self.probe(running: false, answers: false), at: 93) == .rollBack(.noReady))
        // Gone before the gate first looked (dpkg's postinst outlasted its life): systemd's word decides. Never
        // active since the install and timed out: no READY (a unit with a shorter TimeoutStartSec than the limit).
        gate = HealthGate(settings: settings, installedAt: 100)
        #expect(gate.observe(.init(running: false, crashed: true, timedOut: true, activeSince: 40, mainPID: 0, answers: false, backendOnline: false), at: 122)
            == .rollBack(.noReady))
        // Active since the install, then timed out (RuntimeMaxSec) or killed: it died after its start.
        for timedOut in [true, false] {
            gate = HealthGate(settings: settings, installedAt: 100)
            #expect(gate.observe(.init(running: false, crashed: true, timedOut: timedOut, activeSince: 105, mainPID: 0, answers: false, backendOnline: false), at: 114)
                == .rollBack(.crashLoop))
        }
        // Never active, its process ended by itself: a crash at the start.
        gate = HealthGate(settings: settings, installedAt: 100)
        #expect(gate.observe(.init(running: false, crashed: true, exited: true, activeSince: nil, mainPID: 0, answers: false, backendOnline: false), at: 103)
            == .rollBack(.crashAtStart))
        // Seen during its next start, its result reset: neither yet; the next end (here a timeout) decides. A package
        // test under load once called a release without READY a crash at the start this way.
        gate = HealthGate(settings: settings, installedAt: 100)
        #expect(gate.observe(.init(running: false, crashed: true, activeSince: nil, mainPID: 0, answers: false, backendOnline: false), at: 130) == .wait)
        #expect(gate.observe(.init(running: false, crashed: true, timedOut: true, activeSince: nil, mainPID: 0, answers: false, backendOnline: false), at: 145)
            == .rollBack(.noReady))
        // Seen answering, then timed out (RuntimeMaxSec): a crash after the start, not a missing READY.
        gate = HealthGate(settings: settings, installedAt: 0)
        _ = gate.observe(Self.probe(), at: 5)
        #expect(gate.observe(.init(running: false, crashed: true, timedOut: true, activeSince: 3, mainPID: 0, answers: false, backendOnline: false), at: 13)
            == .rollBack(.crashLoop))

        gate = HealthGate(settings: settings, installedAt: 0)
        _ = gate.observe(Self.probe(), at: 5)
        #expect(gate.observe(Self.probe(answers: false), at: 10) == .wait)
        #expect(gate.observe(Self.probe(answers: false), at: 40) == .rollBack(.socketSilent))

        gate = HealthGate(settings: settings, installedAt: 0)
        _ = gate.observe(Self.probe(online: false), at: 5)
        #expect(gate.observe(Self.probe(online: false), at: 65) == .rollBack(.backendUnreachable))

        // A unit whose backend was down before the install is not blamed for it.
        gate = HealthGate(settings: .init(healthySeconds: 60, backendRequired: false), installedAt: 0)
        _ = gate.observe(Self.probe(online: false), at: 5)
        #expect(gate.observe(Self.probe(online: false), at: 65) == .commit)
    }
}
