import DriverAPI
import DriverDomain
import Testing

@Suite("Trusted clock")
struct TrustedClockTests {
    typealias Reading = TrustedClock.Reading
    static let gps2026 = 1_795_852_800.0
    static let y2000 = 946_684_800.0

    @Test("a synchronised system clock after the release date is used as it is")
    func synchronised() {
        let clock = TrustedClock()
        #expect(clock.stamp(Reading(wall: Self.gps2026, monotonic: 50, kernelSynchronized: true)) == Stamp(time: Self.gps2026, source: .ntp))
    }

    @Test("booted at 2000 with no RTC: unsynced until a fix, then GPS time carried on the monotonic clock")
    func bootedIn2000() {
        var clock = TrustedClock()
        #expect(clock.stamp(Reading(wall: Self.y2000 + 10, monotonic: 10, kernelSynchronized: false)).source == .unsynced)
        // Fixes arrive 0.3 to 0.9 s after their epoch; the least delayed one sets the offset.
        clock.observeFix(time: Self.gps2026, monotonic: 20.9)
        clock.observeFix(time: Self.gps2026 + 1, monotonic: 21.3)
        clock.observeFix(time: Self.gps2026 + 2, monotonic: 22.6)
        let stamp = clock.stamp(Reading(wall: Self.y2000 + 3600, monotonic: 3620, kernelSynchronized: false))
        #expect(stamp.source == .gps)
        #expect(abs(stamp.time - (Self.gps2026 + 3600 - 0.3)) < 1e-6)
        // Even a kernel that claims synchronisation is not believed at a date before the release.
        #expect(clock.stamp(Reading(wall: Self.y2000 + 3600, monotonic: 3620, kernelSynchronized: true)).source == .gps)
    }

    @Test("a synchronised clock wins over a receiver whose time is an era off; the disagreement is shown")
    func disagreement() {
        var clock = TrustedClock()
        let era = 1024.0 * 7 * 86400
        clock.observeFix(time: Self.gps2026 - era, monotonic: 100)
        #expect(clock.stamp(Reading(wall: Self.gps2026 + 5, monotonic: 105, kernelSynchronized: true)) == Stamp(time: Self.gps2026 + 5, source: .ntp))
        let status = clock.status(Reading(wall: Self.gps2026 + 5, monotonic: 105, kernelSynchronized: true))
        #expect(status.source == .ntp && status.gpsTimeKnown && status.systemClockOffset == 0)
        #expect(abs(status.gpsTimeOffset! + era) < 1e-6)
        // The kernel loses synchronisation: GPS time it is, era and all (the fix filter is what rejects eras).
        #expect(clock.stamp(Reading(wall: Self.gps2026 + 6, monotonic: 106, kernelSynchronized: false)).source == .gps)
    }

    @Test("a re-anchored receiver timeline forgets what was learnt")
    func forget() {
        var clock = TrustedClock()
        clock.observeFix(time: Self.gps2026, monotonic: 1)
        clock.forgetGPS()
        #expect(clock.gpsOffset == nil)
        #expect(clock.stamp(Reading(wall: Self.y2000, monotonic: 2, kernelSynchronized: false)).source == .unsynced)
    }
}
