import DriverDomain
import Testing

@Suite("Uplink scheduler")
struct UplinkSchedulerTests {
    let idle = UplinkScheduler.Backlog(pings: 0, items: 0)
    let pings = UplinkScheduler.Backlog(pings: 3, items: 0)

    @Test("pings go every 5 s moving and 10 s stationary; nothing pending means waiting")
    func cadence() {
        var scheduler = UplinkScheduler()
        #expect(scheduler.next(now: 100, moving: true, backlog: pings, flushRequested: false) == .send)
        scheduler.succeeded(now: 100)
        #expect(scheduler.next(now: 101, moving: true, backlog: pings, flushRequested: false) == .wait(until: 105))
        #expect(scheduler.next(now: 105, moving: true, backlog: pings, flushRequested: false) == .send)
        #expect(scheduler.next(now: 105, moving: false, backlog: pings, flushRequested: false) == .wait(until: 110))
        #expect(scheduler.next(now: 110, moving: false, backlog: pings, flushRequested: false) == .send)
        #expect(scheduler.next(now: 200, moving: false, backlog: idle, flushRequested: false) == .wait(until: 210))
        #expect(scheduler.linkState == .online)
    }

    @Test("a queued transition, a full batch or a flush goes at once")
    func early() {
        var scheduler = UplinkScheduler()
        scheduler.succeeded(now: 100)
        #expect(scheduler.next(now: 101, moving: false, backlog: .init(pings: 0, items: 1), flushRequested: false) == .send)
        #expect(scheduler.next(now: 101, moving: false, backlog: .init(pings: 500, items: 0, fullBatch: true), flushRequested: false) == .send)
        #expect(scheduler.next(now: 101, moving: false, backlog: idle, flushRequested: true) == .send)
    }

    @Test("transient failures back off with full jitter from 1 s up to 5 min; success resets; a flush overrides the wait")
    func backoff() {
        var scheduler = UplinkScheduler()
        #expect(scheduler.failed(.transient("connection refused"), now: 0, random: 0.5) == .wait(until: 0.5))
        #expect(scheduler.failed(.transient("503"), now: 1, random: 0.5) == .wait(until: 2))
        #expect(scheduler.failed(.transient("503"), now: 2, random: 0.5) == .wait(until: 4))
        #expect(scheduler.linkState == .backingOff && scheduler.lastError == "503")
        #expect(scheduler.next(now: 3, moving: true, backlog: .init(pings: 0, items: 1), flushRequested: false) == .wait(until: 4))
        #expect(scheduler.next(now: 3, moving: true, backlog: pings, flushRequested: true) == .send)
        for attempt in 3..<20 { _ = scheduler.failed(.transient("x"), now: Double(attempt), random: 0.999) }
        #expect(scheduler.failed(.transient("x"), now: 100, random: 1) == .wait(until: 400))
        // Once the wait is over, pending pings go at once (no extra interval on top of the backoff).
        #expect(scheduler.next(now: 400, moving: false, backlog: pings, flushRequested: false) == .send)
        scheduler.succeeded(now: 401)
        #expect(scheduler.consecutiveFailures == 0 && scheduler.retryAt == nil && scheduler.lastError == nil)
    }

    @Test("a 401 pauses until new credentials arrive")
    func unauthorized() {
        var scheduler = UplinkScheduler()
        #expect(scheduler.failed(.unauthorized, now: 0, random: 0) == .authRequired)
        #expect(scheduler.next(now: 50, moving: true, backlog: .init(pings: 10, items: 2), flushRequested: true) == .authRequired)
        #expect(scheduler.linkState == .authRequired)
        scheduler.authRestored()
        #expect(scheduler.next(now: 51, moving: true, backlog: pings, flushRequested: false) == .send)
    }
}
