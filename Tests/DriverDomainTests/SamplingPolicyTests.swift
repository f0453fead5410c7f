import DriverAPI
import DriverDomain
import Testing

@Suite("Sampling policy")
struct SamplingPolicyTests {
    static func fix(_ t: Double, speed: Double? = 0, track: Double? = nil) -> Fix {
        Fix(time: t, latitude: 52.52, longitude: 13.405, speed: speed, track: track)
    }

    @Test("1 Hz moving: every epoch of a 1 Hz receiver")
    func moving() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .moving)
        #expect(policy.decide(Self.fix(0, speed: 10)) == .record(.first))
        for t in 1...30 { #expect(policy.decide(Self.fix(Double(t), speed: 10)) == .record(.interval)) }
        #expect(policy.watchPlan == .continuous)
    }

    @Test("0.1 Hz stationary: one fix in ten")
    func stationary() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .stationary)
        var recorded = 0
        for t in 0..<600 where policy.decide(Self.fix(Double(t))) != .skip { recorded += 1 }
        #expect(recorded == 60)
        #expect(policy.watchPlan == .periodic(interval: 10, release: false))
    }

    @Test("secondsUntilDue: how long a reader may sleep after a skipped fix and still find the due one")
    func secondsUntilDue() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .stationary)
        #expect(policy.secondsUntilDue(after: Self.fix(0)) == nil)
        #expect(policy.decide(Self.fix(100)) == .record(.first))
        // Epochs read after a pause that fell 1.6 s short (a receiver clock slow against the unit's).
        #expect(policy.decide(Self.fix(108.4)) == .skip)
        let wait = policy.secondsUntilDue(after: Self.fix(108.4)) ?? -1
        #expect(abs(wait - 1.55) < 1e-9)
        #expect(policy.decide(Self.fix(108.4 + wait)) == .record(.interval))
        #expect(policy.secondsUntilDue(after: Self.fix(130)) == 0)
    }

    @Test("a mode change records the next fix at once")
    func modeChange() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .stationary)
        _ = policy.decide(Self.fix(0))
        #expect(policy.decide(Self.fix(1)) == .skip)
        policy.motionChanged(to: .moving)
        #expect(policy.decide(Self.fix(2, speed: 5)) == .record(.motionChanged))
    }

    @Test("a sharp turn at speed records at once, a gentle one or a slow one does not")
    func heading() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .stationary)  // 0.1 Hz, so only the heading rule can fire between samples
        _ = policy.decide(Self.fix(0, speed: 8, track: 90))
        #expect(policy.decide(Self.fix(1, speed: 8, track: 100)) == .skip)
        #expect(policy.decide(Self.fix(2, speed: 8, track: 106)) == .record(.heading))
        #expect(policy.decide(Self.fix(3, speed: 2, track: 170)) == .skip)
        #expect(policy.decide(Self.fix(4, speed: 8, track: 350)) == .record(.heading))
        #expect(policy.decide(Self.fix(5, speed: 8, track: 5)) == .record(.heading))  // 15° across north
    }

    @Test("duplicate epochs are skipped; time going backwards records and starts afresh")
    func clock() {
        var policy = SamplingPolicy()
        _ = policy.decide(Self.fix(100))
        #expect(policy.decide(Self.fix(100)) == .skip)
        #expect(policy.decide(Self.fix(40)) == .record(.clockJump))
        #expect(policy.decide(Self.fix(41)) == .record(.interval))
    }

    @Test("battery saver drops to 0.2 Hz moving and 1/60 Hz stationary, releasing gpsd when stationary")
    func saver() {
        var policy = SamplingPolicy()
        policy.setBatterySaver(true)
        policy.motionChanged(to: .moving)
        #expect(policy.effectiveHz == 0.2)
        #expect(policy.watchPlan == .periodic(interval: 5, release: false))
        policy.motionChanged(to: .stationary)
        #expect(abs(policy.effectiveHz - 1.0 / 60) < 1e-9)
        #expect(policy.watchPlan == .periodic(interval: 60, release: true))
    }

    @Test("rate requests raise the rate, capped in saver mode")
    func requests() {
        var policy = SamplingPolicy()
        policy.motionChanged(to: .stationary)
        policy.setRequestedHz(1)
        #expect(policy.effectiveHz == 1)
        #expect(policy.watchPlan == .continuous)
        policy.setBatterySaver(true)
        #expect(policy.effectiveHz == 0.2)
        policy.setRequestedHz(0)
        #expect(abs(policy.effectiveHz - 1.0 / 60) < 1e-9)
        policy.setBatterySaver(false)
        #expect(policy.effectiveHz == 0.1)
    }
}

@Suite("Battery policy and backoff")
struct BatteryAndBackoffTests {
    @Test func batteryPolicy() {
        let discharging = PowerSupplyReading(name: "BAT0", kind: .battery, status: "Discharging", capacity: 15)
        let high = PowerSupplyReading(name: "BAT0", kind: .battery, status: "Discharging", capacity: 60)
        let mains = PowerSupplyReading(name: "AC", kind: .mains, online: true)
        #expect(BatteryPolicy.saver(readings: [discharging], thresholdPercent: 20, ignition: nil))
        #expect(BatteryPolicy.saver(readings: [PowerSupplyReading(name: "BAT0", kind: .battery, status: "Discharging", capacity: 20)], thresholdPercent: 20, ignition: nil))
        #expect(!BatteryPolicy.saver(readings: [high], thresholdPercent: 20, ignition: nil))
        #expect(!BatteryPolicy.saver(readings: [discharging, mains], thresholdPercent: 20, ignition: nil))
        #expect(!BatteryPolicy.saver(readings: [], thresholdPercent: 20, ignition: nil))
        #expect(BatteryPolicy.saver(readings: [], thresholdPercent: 20, ignition: false))
        #expect(!BatteryPolicy.saver(readings: [PowerSupplyReading(name: "BAT0", kind: .battery, status: "Charging", capacity: 5)], thresholdPercent: 20, ignition: true))
    }

    @Test("backoff: full jitter under a doubling ceiling capped at 5 minutes")
    func backoff() {
        let backoff = Backoff()
        #expect([0, 1, 2, 5, 8, 9, 100].map { backoff.ceiling(attempt: $0) } == [1, 2, 4, 32, 256, 300, 300])
        #expect(backoff.delay(attempt: 3, random: 0) == 0)
        #expect(backoff.delay(attempt: 3, random: 0.5) == 4)
        #expect(backoff.delay(attempt: 20, random: 0.999) < 300)
        #expect(backoff.delay(attempt: 3, random: 7) == 8)  // randomness outside [0,1) is clamped
    }

    @Test("decorrelated jitter: each wait in [base, 3 × the previous], the range capped, never the draw piled on the cap")
    func decorrelated() {
        let backoff = Backoff(base: 1, cap: 120)
        #expect(backoff.next(after: nil, random: 0) == 1)
        #expect(backoff.next(after: nil, random: 1) == 3)
        #expect(backoff.next(after: 10, random: 0.5) == 15.5)
        #expect(backoff.next(after: 100, random: 1) == 120)
        #expect(backoff.next(after: 100, random: 0.5) == 60.5)
        #expect(backoff.next(after: 0.01, random: 1) == 3)  // a previous wait under the base counts as the base
        #expect(Backoff(base: 5, cap: 1).cap == 5)  // a cap under the base is the base
    }

    @Test func rates() {
        #expect(TextFormat.rate(1) == "1 Hz")
        #expect(TextFormat.rate(0.1) == "0.1 Hz")
        #expect(TextFormat.rate(0.2) == "0.2 Hz")
        #expect(TextFormat.rate(2.5) == "2.5 Hz")
        #expect(TextFormat.rate(1.0 / 60) == "1/60 Hz")
        #expect(TextFormat.fixed(-0.04, decimals: 1) == "0.0")
        #expect(TextFormat.fixed(-1.25, decimals: 1) == "-1.3")
        #expect(TextFormat.fixed(12.3456, decimals: 4) == "12.3456")
        #expect(TextFormat.UTC(1_795_852_800).iso8601 == "2026-11-28T08:00:00Z")
        #expect(StatusLine(clients: 1, link: .connected, motion: .moving, samplingHz: 1, pings: 2).text
            == "gps connected, moving at 1 Hz; 2 pings recorded; backend disabled, 0 queued; 1 client")
        #expect(StatusLine(clients: 2, link: .connected, motion: .stationary, samplingHz: 0.1, pings: 1, backend: .backingOff, queued: 7).text
            == "gps connected, stationary at 0.1 Hz; 1 ping recorded; backend backingOff, 7 queued; 2 clients")
        #expect(StatusLine(clients: 0, link: .connected, motion: .stationary, samplingHz: 0.1, pings: 1, backend: .online, queued: nil).text
            == "gps connected, stationary at 0.1 Hz; 1 ping recorded; backend online, queue unreadable; 0 clients")
    }

    @Test func headings() {
        #expect(Geo.headingDifference(350, 5) == 15)
        #expect(Geo.headingDifference(10, 190) == 180)
        let a = Fix(time: 0, latitude: 52.52, longitude: 13.405), b = Fix(time: 0, latitude: 52.53, longitude: 13.405)
        #expect(abs(Geo.distance(a, b) - 1112) < 2)
    }
}
