import BackendContract
@testable import DriverDaemon
import DriverAPI
import DriverDomain
import Testing

@Suite("Token ages across clocks")
struct TokenTimesTests {
    static func tokens(loggedIn: Stamp, expiresIn: Int = 3600) -> StoredTokens {
        StoredTokens(
            TokenResponse(accessToken: "a", refreshToken: "r", expiresIn: expiresIn, driverId: "drv-1"), now: loggedIn, loggedIn: loggedIn)
    }

    @Test("stamps of the same clock, or of two true clocks, are compared: a login 2 h old is 2 h old")
    func comparable() {
        for (stamped, now) in [(TimeSource.unsynced, TimeSource.unsynced), (.gps, .ntp), (.ntp, .gps), (.gps, .gps)] {
            let times = TokenTimes(Self.tokens(loggedIn: Stamp(time: 1000, source: stamped)), now: Stamp(time: 8200, source: now), monotonic: 50_000)
            #expect(times.loggedIn == 50_000 - 7200 && times.expires == 50_000 + 3600 - 7200, "\(stamped) read at \(now)")
        }
    }

    @Test("a login stamped with GPS time read against an unsynchronised clock days ahead is not days old: its age starts now, the token is refreshed")
    func acrossClocks() {
        let gps = Self.tokens(loggedIn: Stamp(time: 1_795_000_000, source: .gps))
        let days = TokenTimes(gps, now: Stamp(time: 1_795_000_000 + 4 * 86400, source: .unsynced), monotonic: 30)
        #expect(days.loggedIn == 30 && days.expires == 30)
        // And the other way: a stamp of an unsynchronised clock read once GPS time is known.
        let unsynced = Self.tokens(loggedIn: Stamp(time: 946_684_800, source: .unsynced))
        let known = TokenTimes(unsynced, now: Stamp(time: 1_795_000_000, source: .gps), monotonic: 30)
        #expect(known.loggedIn == 30 && known.expires == 30)
    }
}
