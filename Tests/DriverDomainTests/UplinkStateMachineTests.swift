import DriverAPI
import DriverDomain
import Testing

/// The uplink's state machine, event by event, with the runner's clock as numbers.
@Suite("Uplink state machine")
struct UplinkStateMachineTests {
    typealias Machine = UplinkStateMachine
    let idle = Machine.Backlog(pings: 0, items: 0)
    let pings = Machine.Backlog(pings: 3, items: 0)

    @Test("pings go every 5 s moving and 10 s stationary; nothing pending means waiting")
    func cadence() {
        var machine = Machine()
        #expect(machine.next(now: 100, cadence: .moving, backlog: pings) == .attempt)
        #expect(machine.attemptSucceeded(now: 100) == .linkRestored)
        #expect(machine.next(now: 101, cadence: .moving, backlog: pings) == .wait(until: 105))
        #expect(machine.next(now: 105, cadence: .moving, backlog: pings) == .attempt)
        #expect(machine.next(now: 105, cadence: .stationary, backlog: pings) == .wait(until: 110))
        #expect(machine.next(now: 110, cadence: .stationary, backlog: pings) == .attempt)
        #expect(machine.next(now: 200, cadence: .stationary, backlog: idle) == .wait(until: 210))
        #expect(machine.link == .online)
        #expect(machine.attemptSucceeded(now: 201) == .none)
    }

    @Test("parked with the ignition off, pings and heartbeats wait for one burst every 2 minutes; a transition or an SOS still goes at once, and moving again goes back to 5 s")
    func saverCadence() {
        var machine = Machine()
        #expect(machine.interval(.saver) == 120 && machine.interval(.moving) == 5 && machine.interval(.stationary) == 10)
        // Off shift nothing is timed: the loop looks again every 10 minutes (an item or the shift's start wakes it).
        #expect(machine.next(now: 100, cadence: .offShift, backlog: idle) == .wait(until: 700))
        _ = machine.attemptSucceeded(now: 100)
        machine.pingsSent(now: 100)
        #expect(machine.next(now: 110, cadence: .saver, backlog: pings) == .wait(until: 220))
        // A receiver without a fix: its heartbeat rides the same burst, not a minute of its own.
        let noFix = Machine.Backlog(pings: 0, items: 0, gpsWithoutFix: .noFix)
        machine.heartbeatSent(now: 100, gps: .noFix)
        #expect(!machine.heartbeatDue(now: 161, gps: .noFix, cadence: .saver))
        #expect(machine.heartbeatDue(now: 161, gps: .noFix, cadence: .stationary))
        #expect(machine.next(now: 161, cadence: .saver, backlog: noFix) == .wait(until: 281))
        #expect(machine.heartbeatDue(now: 220, gps: .noFix, cadence: .saver))
        // The receiver's state changed: told at once, whatever the cadence.
        #expect(machine.heartbeatDue(now: 130, gps: .lost, cadence: .saver))
        #expect(machine.next(now: 130, cadence: .saver, backlog: .init(pings: 3, items: 1)) == .attempt)
        #expect(machine.next(now: 130, cadence: .saver, backlog: .init(pings: 3, items: 0, urgent: 0)) == .wait(until: 220))
        #expect(machine.next(now: 130, cadence: .moving, backlog: pings) == .attempt)
    }

    @Test("a queued transition, a full batch or a flush goes at once; the attempt answers the flush")
    func early() {
        var machine = Machine()
        _ = machine.attemptSucceeded(now: 100)
        #expect(machine.next(now: 101, cadence: .stationary, backlog: .init(pings: 0, items: 1)) == .attempt)
        #expect(machine.next(now: 101, cadence: .stationary, backlog: .init(pings: 500, items: 0, fullBatch: true)) == .attempt)
        machine.requestFlush()
        #expect(machine.next(now: 101, cadence: .stationary, backlog: idle) == .attempt)
        machine.attemptStarted()
        #expect(machine.next(now: 101, cadence: .stationary, backlog: idle) == .wait(until: 111))
    }

    @Test("trips, idle periods and harsh events wait for the batch timer, as pings do; at shutdown they count as queued")
    func lowPriority() {
        var machine = Machine()
        _ = machine.attemptSucceeded(now: 100)
        let low = Machine.Backlog(pings: 0, items: 0, lowItems: 1)
        #expect(machine.next(now: 101, cadence: .moving, backlog: low) == .wait(until: 105))
        #expect(machine.next(now: 105, cadence: .moving, backlog: low) == .attempt)
        machine.stop()
        #expect(machine.next(now: 106, cadence: .moving, backlog: low) == .finalAttempt)
    }

    @Test("an SOS is tried again every 5 s whatever the backoff; other items wait out the backoff")
    func urgentRetry() throws {
        var machine = Machine()
        for attempt in 0..<12 { _ = machine.attemptFailed(.transient("503"), now: Double(attempt), random: 0.999, hasCredentials: false) }
        let retryAt = try #require(machine.retryAt)
        #expect(retryAt > 100)
        let sos = Machine.Backlog(pings: 10, items: 2, urgent: 1)
        #expect(machine.next(now: 12, cadence: .moving, backlog: .init(pings: 10, items: 2)) == .wait(until: retryAt))
        #expect(machine.next(now: 12, cadence: .moving, backlog: sos) == .wait(until: 16))
        #expect(machine.next(now: 16, cadence: .moving, backlog: sos) == .attempt)
        machine.attemptStarted()
        _ = machine.attemptFailed(.transient("503"), now: 16, random: 0.999, hasCredentials: false)
        #expect(machine.next(now: 17, cadence: .moving, backlog: sos) == .wait(until: 21))
        // A backoff shorter than the SOS interval is kept. (Up for the first time: the route is fetched.)
        #expect(machine.attemptSucceeded(now: 21) == .linkRestored)
        _ = machine.attemptSucceeded(now: 51)
        _ = machine.attemptFailed(.transient("503"), now: 52, random: 0.5, hasCredentials: false)
        #expect(machine.next(now: 52, cadence: .moving, backlog: sos) == .wait(until: 54))
        // Waiting for a login, nothing can go: an SOS waits for it too.
        _ = machine.attemptFailed(.unauthorized("401"), now: 53, random: 0, hasCredentials: false)
        #expect(machine.next(now: 30, cadence: .moving, backlog: sos) == .waitForLogin)
    }

    @Test("transient failures back off with decorrelated jitter from 1 s up to the 2-min cap; a flush overrides the wait")
    func backoff() {
        var machine = Machine()
        func fail(_ reason: String, at now: Double, _ random: Double) -> Machine.Effect {
            machine.attemptFailed(.transient(reason), now: now, random: random, hasCredentials: false)
        }
        // Each wait is drawn in [1 s, 3 × the previous], the first in [1, 3].
        #expect(fail("connection refused", at: 0, 0.5) == .none)
        #expect(machine.link == .backingOff(until: 2) && machine.backoffWait == 2)
        _ = fail("503", at: 2, 1)
        #expect(machine.retryAt == 8)
        _ = fail("503", at: 8, 0)
        #expect(machine.retryAt == 9 && machine.lastError == "503" && machine.consecutiveFailures == 3)
        #expect(machine.next(now: 8.5, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .wait(until: 9))
        machine.requestFlush()
        #expect(machine.next(now: 8.5, cadence: .moving, backlog: pings) == .attempt)
        machine.attemptStarted()
        // Long failing: the range reaches the cap and stays there, a draw never above it (nor piled on it).
        for attempt in 9..<30 { _ = fail("x", at: Double(attempt), 0.999) }
        _ = fail("x", at: 100, 1)
        #expect(machine.retryAt == 220)
        _ = fail("x", at: 220, 0.5)
        #expect(machine.retryAt == 220 + 60.5)
        // Once the wait is over, pending pings go at once (no extra interval on top of the backoff).
        #expect(machine.next(now: 281, cadence: .stationary, backlog: pings) == .attempt)
        #expect(machine.attemptSucceeded(now: 281) == .linkRestored)
        #expect(machine.consecutiveFailures == 0 && machine.retryAt == nil && machine.lastError == nil)
    }

    @Test("a request lost on a working link is no outage: its items go again within 0.5 to 2 s, pings keep their turn, three losses in a row back off")
    func lostRequest() {
        var machine = Machine()
        let item = Machine.Backlog(pings: 3, items: 1)
        _ = machine.attemptSucceeded(now: 100)
        #expect(machine.attemptFailed(.lost("remote connection closed"), now: 101, random: 0.5, hasCredentials: false) == .none)
        #expect(machine.link == .online && machine.retryAt == nil && machine.resendAt == 102.25 && machine.lastError == "remote connection closed")
        #expect(machine.next(now: 101.5, cadence: .moving, backlog: item) == .wait(until: 102.25))
        // The items alone: the pings keep their turn, 5 s after the attempt that carried them (101).
        #expect(machine.next(now: 102.25, cadence: .moving, backlog: item) == .resend)
        #expect(machine.retryBudget.tokens == 4)
        // The resend lost too. Pings alone wait for their turn (the next batch carries them): no token spent.
        _ = machine.attemptFailed(.lost("reset"), now: 103, random: 0, hasCredentials: false)
        #expect(machine.lastAttemptAt == 101)
        #expect(machine.next(now: 103.6, cadence: .moving, backlog: pings) == .wait(until: 106))
        #expect(machine.retryBudget.tokens == 4 && machine.consecutiveFailures == 2)
        // The third in a row is an outage: the backoff, and its base.
        _ = machine.attemptFailed(.lost("reset"), now: 108, random: 0, hasCredentials: false)
        #expect(machine.link == .backingOff(until: 109) && machine.resendAt == nil && machine.consecutiveFailures == 3)
        // A driver's tap does not wait out losses in a row (the backend is there); queued items and pings do.
        #expect(machine.next(now: 108.2, cadence: .moving, backlog: Machine.Backlog(pings: 3, items: 1, freshItems: true)) == .attempt)
        #expect(machine.next(now: 108.2, cadence: .moving, backlog: item) == .wait(until: 109))
        // Losses in a row back off no longer than a batch interval (10 s): the backend is there, the link loses some.
        for attempt in 0..<8 { _ = machine.attemptFailed(.lost("reset"), now: 109 + Double(attempt), random: 1, hasCredentials: false) }
        #expect(machine.retryAt == 126 && machine.backoffWait == 10)
        // A request that went through in an attempt ends the run of losses: a loss after it is the first again.
        _ = machine.attemptSucceeded(now: 126)
        machine.requestDelivered()
        _ = machine.attemptFailed(.lost("reset"), now: 127, random: 0, hasCredentials: false)
        #expect(machine.consecutiveFailures == 1 && machine.link == .online && machine.resendAt == 127.5)
        // A link never up: a lost first request backs off too, from the base.
        var fresh = Machine()
        _ = fresh.attemptFailed(.lost("reset"), now: 0, random: 0, hasCredentials: false)
        #expect(fresh.link == .backingOff(until: 1))
    }

    @Test("a lost batch costs no resend: it waits for the pings' next turn (and rides with it); a backlog's full batch goes again early while the budget keeps the transitions' reserve")
    func lostBatchWaitsForTurn() {
        var machine = Machine()
        let pings = Machine.Backlog(pings: 8, items: 0)
        _ = machine.attemptSucceeded(now: 100)
        _ = machine.attemptFailed(.lost("reset"), now: 100, random: 0, hasCredentials: false)
        #expect(machine.next(now: 100.5, cadence: .moving, backlog: pings) == .wait(until: 105))
        #expect(machine.next(now: 105, cadence: .moving, backlog: pings) == .attempt)
        // A backlog's full batches spend the budget down to the items' reserve; then they wait for the next turn.
        let full = Machine.Backlog(pings: 900, items: 0, fullBatch: true)
        var spent = Machine()
        _ = spent.attemptSucceeded(now: 0)
        var time = 0.0
        while spent.retryBudget.canSpend(keeping: Machine.itemsReserve) {
            _ = spent.attemptFailed(.lost("reset"), now: time, random: 0, hasCredentials: false)
            #expect(spent.next(now: time + 0.5, cadence: .moving, backlog: full) == .attempt)
            _ = spent.attemptSucceeded(now: time + 0.6)
            time += 1
        }
        #expect(spent.retryBudget.tokens == 2 && time == 3)
        _ = spent.attemptFailed(.lost("reset"), now: 10, random: 0, hasCredentials: false)
        #expect(spent.next(now: 11, cadence: .moving, backlog: full) == .wait(until: 15))
        // A driver's tap meanwhile is no resend: its first send goes at once, whatever the budget.
        #expect(spent.next(now: 11, cadence: .moving, backlog: Machine.Backlog(pings: 8, items: 1, freshItems: true)) == .attempt)
        // A lost transition takes the reserve: it goes again early, without the pings (they keep their turn).
        #expect(spent.next(now: 11, cadence: .moving, backlog: Machine.Backlog(pings: 8, items: 1)) == .resend)
        #expect(spent.retryBudget.tokens == 1)
        _ = spent.attemptSucceeded(now: 11.2)
        #expect(spent.lastAttemptAt == 10, "the resend is no turn")
        #expect(spent.next(now: 11.2, cadence: .moving, backlog: pings) == .wait(until: 15))
    }

    @Test("a link that lost a request sends its batches as requests for 2 minutes, the WebSocket only listening; an outage is no lossy link")
    func lossyLinkBatches() {
        var machine = Machine()
        _ = machine.attemptSucceeded(now: 100)
        #expect(machine.batchesOverSocket(now: 100))
        _ = machine.attemptFailed(.lost("the WebSocket closed with the frame unacked"), now: 101, random: 0, hasCredentials: false)
        #expect(!machine.batchesOverSocket(now: 101) && !machine.batchesOverSocket(now: 220.9))
        #expect(machine.batchesOverSocket(now: 221))
        // Each loss holds it again from its own time.
        _ = machine.attemptFailed(.lost("reset"), now: 200, random: 0, hasCredentials: false)
        #expect(!machine.batchesOverSocket(now: 221) && machine.batchesOverSocket(now: 320))
        // A backend that refuses or answers 5xx is away, not lossy: the socket carries batches again once it is back.
        var outage = Machine()
        _ = outage.attemptSucceeded(now: 0)
        _ = outage.attemptFailed(.transient("connection refused"), now: 1, random: 0, hasCredentials: false)
        #expect(outage.batchesOverSocket(now: 2))
        // An outage's backoff holds a driver's tap too (only an SOS or a flush cuts it short).
        #expect(outage.next(now: 1.5, cadence: .moving, backlog: Machine.Backlog(pings: 0, items: 1, freshItems: true)) == .wait(until: 2))
    }

    @Test("a return is worth a refetch (route, release, configuration) only after a minute or more down, the first time up, or after a login")
    func briefOutage() {
        var machine = Machine()
        #expect(machine.attemptSucceeded(now: 0) == .linkRestored, "the first time up")
        #expect(machine.attemptSucceeded(now: 5) == .none)
        // A lossy link's backoff of a few seconds: the pushes' cursor brings what changed.
        for now in [10.0, 11, 12] { _ = machine.attemptFailed(.lost("reset"), now: now, random: 0, hasCredentials: false) }
        #expect(machine.retryAt != nil)
        #expect(machine.attemptSucceeded(now: 20) == .none)
        // Down from 30 s to 95 s: a return.
        _ = machine.attemptFailed(.transient("connection refused"), now: 30, random: 0.5, hasCredentials: false)
        _ = machine.attemptFailed(.transient("connection refused"), now: 60, random: 0.5, hasCredentials: false)
        #expect(machine.attemptSucceeded(now: 89.9) == .none)
        _ = machine.attemptFailed(.transient("connection refused"), now: 100, random: 0.5, hasCredentials: false)
        #expect(machine.attemptSucceeded(now: 160) == .linkRestored)
        // A login restores at once, down or not.
        machine.loggedIn(driver: "drv-1")
        #expect(machine.attemptSucceeded(now: 161) == .linkRestored)
    }

    @Test("the retry budget: each early resend spends a token, a request that goes through earns a fifth of one back; once spent, a lost item waits for the next turn, an SOS never")
    func retryBudget() {
        var machine = Machine()
        let item = Machine.Backlog(pings: 3, items: 1)
        _ = machine.attemptSucceeded(now: 0)
        var now = 0.0
        for _ in 0..<6 {
            now += 1
            _ = machine.attemptFailed(.lost("reset"), now: now, random: 0, hasCredentials: false)
            #expect(machine.next(now: now + 0.5, cadence: .moving, backlog: item) == .resend)
            machine.requestDelivered()
            _ = machine.attemptSucceeded(now: now + 0.5)
        }
        // Five tokens, six resends, six successes' 1.2 back: 0.2 left, under one resend.
        #expect(abs(machine.retryBudget.tokens - 0.2) < 1e-9 && !machine.retryBudget.canSpend)
        now += 1
        _ = machine.attemptFailed(.lost("reset"), now: now, random: 0, hasCredentials: false)
        #expect(machine.next(now: now + 0.5, cadence: .moving, backlog: item) == .wait(until: now + 5))
        #expect(machine.next(now: now + 0.5, cadence: .moving, backlog: .init(pings: 0, items: 1, urgent: 1)) == .attempt)
        #expect(machine.next(now: now + 5, cadence: .moving, backlog: item) == .attempt)
        // A backlog's full batches are items too: no batch goes again at once without a token.
        _ = machine.attemptFailed(.lost("reset"), now: now + 5, random: 0, hasCredentials: false)
        #expect(machine.next(now: now + 5.5, cadence: .moving, backlog: .init(pings: 500, items: 0, fullBatch: true)) == .wait(until: now + 10))
    }

    @Test("on a link losing 30 % of requests at random: early resends within a fifth of the successes plus the bucket, and a transition's p95 delivery within 15 s")
    func retryBudgetBound() {
        var machine = Machine()
        var seed: UInt64 = 42
        func random() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53)
        }
        // One transition after another, each queued a second after the last was delivered; what each waited.
        let item = Machine.Backlog(pings: 5, items: 1)
        var now = 0.0, successes = 0, early = 0, queuedAt = 0.0
        var delivery: [Double] = []
        _ = machine.attemptSucceeded(now: now)
        while delivery.count < 5000 {
            let tokens = machine.retryBudget.tokens
            let action = machine.next(now: now, cadence: .moving, backlog: item)
            if case .wait(let until) = action {
                now = until
                continue
            }
            if machine.retryBudget.tokens < tokens { early += 1 }
            machine.attemptStarted()
            if random() < 0.3 {
                _ = machine.attemptFailed(.lost("reset"), now: now, random: random(), hasCredentials: false)
            } else {
                machine.requestDelivered()
                _ = machine.attemptSucceeded(now: now)
                successes += 1
                delivery.append(now - queuedAt)
                now += 1
                queuedAt = now
            }
        }
        delivery.sort()
        let p95 = delivery[delivery.count * 95 / 100]
        #expect(Double(early) <= Double(successes) * 0.2 + 5, "early resends \(early), successes \(successes)")
        #expect(early > 0)
        #expect(p95 <= 15, "p95 \(p95) s, longest \(delivery.last ?? 0) s")
    }

    @Test("a new certificate ends every wait its absence caused: the backend's hour for a unit without one, a backoff; the queue goes at once")
    func identityChanged() {
        var machine = Machine()
        let item = Machine.Backlog(pings: 0, items: 1)
        _ = machine.attemptSucceeded(now: 0)
        _ = machine.attemptFailed(.transient("HTTP 403 CERTIFICATE_REQUIRED", retryAfter: 3600), now: 1, random: 0, hasCredentials: false)
        #expect(machine.next(now: 2, cadence: .moving, backlog: item) == .wait(until: 3601))
        machine.identityChanged()
        #expect(machine.backendQuietUntil == nil && machine.link == .online)
        #expect(machine.next(now: 2, cadence: .moving, backlog: item) == .attempt)
        // Before any success (enrolled at the start): the link goes back to idle and still goes at once.
        var fresh = Machine()
        _ = fresh.attemptFailed(.transient("refused"), now: 0, random: 1, hasCredentials: false)
        fresh.identityChanged()
        #expect(fresh.link == .idle && fresh.next(now: 0.5, cadence: .moving, backlog: .init(pings: 0, items: 0)) == .attempt)
    }

    @Test("a success takes the backoff one step down, a link up 30 s starts it again: a backend that answers once between refusals keeps it long")
    func backoffReset() {
        var machine = Machine()
        for attempt in 0..<10 { _ = machine.attemptFailed(.transient("503"), now: Double(attempt * 100), random: 1, hasCredentials: false) }
        #expect(machine.backoffWait == 120)
        // Through once, then down again: one step down (120 → 40), the next wait drawn up to 3 × 40, not from 1 s.
        _ = machine.attemptSucceeded(now: 1000)
        #expect(machine.backoffWait == 40)
        _ = machine.attemptFailed(.transient("503"), now: 1010, random: 1, hasCredentials: false)
        #expect(machine.retryAt == 1130)
        // A patchy link that gets through every other time stays low: two successes bring 120 down to 13.3.
        _ = machine.attemptSucceeded(now: 1130)
        _ = machine.attemptSucceeded(now: 1135)
        _ = machine.attemptFailed(.transient("503"), now: 1140, random: 1, hasCredentials: false)
        #expect(machine.retryAt == 1180)
        // Up for 30 s: the link was fine, the next failure starts from the base.
        for _ in 0..<5 { _ = machine.attemptFailed(.transient("503"), now: 1200, random: 1, hasCredentials: false) }
        _ = machine.attemptSucceeded(now: 1300)
        _ = machine.attemptSucceeded(now: 1330)
        _ = machine.attemptFailed(.transient("503"), now: 1330, random: 1, hasCredentials: false)
        #expect(machine.retryAt == 1333 && machine.backoffWait == 3)
        // A remotely set cap holds.
        var capped = Machine(configuration: .init(backoff: Backoff(base: 1, cap: 600)))
        for attempt in 0..<12 { _ = capped.attemptFailed(.transient("503"), now: Double(attempt * 1000), random: 1, hasCredentials: false) }
        #expect(capped.backoffWait == 600)
    }

    @Test("a start's first attempt waits a random share of the fleet's spread window; an SOS, a flush or a login does not wait")
    func startSpread() {
        let spread = Machine.Configuration(spreadWindow: 100)
        var machine = Machine(configuration: spread, now: 10, random: 0.25)
        #expect(machine.firstAttemptAt == 35)
        #expect(machine.next(now: 10, cadence: .moving, backlog: .init(pings: 5, items: 2)) == .wait(until: 35))
        #expect(machine.next(now: 11, cadence: .moving, backlog: .init(pings: 0, items: 1, urgent: 1)) == .attempt)
        #expect(machine.next(now: 35, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .attempt)
        var flushed = Machine(configuration: spread, now: 0, random: 0.9)
        flushed.requestFlush()
        #expect(flushed.next(now: 1, cadence: .moving, backlog: pings) == .attempt)
        var loggedIn = Machine(configuration: spread, now: 0, random: 0.9)
        loggedIn.loggedIn(driver: "driver-1")
        #expect(loggedIn.next(now: 1, cadence: .moving, backlog: idle) == .attempt)
        // A unit alone (no window) starts at once.
        var alone = Machine(now: 10, random: 0.99)
        #expect(alone.next(now: 10, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .attempt)
    }

    @Test("the backend's Retry-After is waited out first, a share of the fleet's spread window on top; an absurd one is capped at an hour; an SOS keeps its 5 s")
    func retryAfter() {
        var machine = Machine()
        _ = machine.attemptFailed(.transient("HTTP 429", retryAfter: 30), now: 100, random: 0, hasCredentials: false)
        #expect(machine.retryAt == 130)
        #expect(machine.next(now: 129, cadence: .moving, backlog: .init(pings: 5, items: 1)) == .wait(until: 130))
        // Jitter spreads a fleet told the same: on top of the 30 s, never inside them (a unit alone: up to 1 s).
        _ = machine.attemptFailed(.transient("HTTP 429", retryAfter: 30), now: 130, random: 0.5, hasCredentials: false)
        #expect(machine.retryAt == 160.5)
        // In a fleet the share is of the fleet's spread window: units refused together come back spread over it.
        var fleet = Machine(configuration: .init(spreadWindow: 50))
        _ = fleet.attemptFailed(.transient("HTTP 503", retryAfter: 600), now: 130, random: 0.5, hasCredentials: false)
        #expect(fleet.retryAt == 755)
        _ = fleet.attemptFailed(.transient("HTTP 429", retryAfter: 4), now: 130, random: 0.5, hasCredentials: false)
        #expect(fleet.retryAt == 159)
        _ = machine.attemptFailed(.transient("HTTP 503", retryAfter: 1e12), now: 200, random: 0, hasCredentials: false)
        #expect(machine.retryAt == 200 + Machine.longestRetryAfter)
        _ = machine.attemptFailed(.transient("HTTP 503", retryAfter: -5), now: 300, random: 0, hasCredentials: false)
        #expect(machine.retryAt == 300)
        // Someone may be in danger: the SOS goes at its own interval whatever the backend asked.
        _ = machine.attemptFailed(.transient("HTTP 429", retryAfter: 600), now: 400, random: 0, hasCredentials: false)
        #expect(machine.next(now: 401, cadence: .moving, backlog: .init(pings: 0, items: 1, urgent: 1)) == .wait(until: 405))
        #expect(machine.next(now: 405, cadence: .moving, backlog: .init(pings: 0, items: 1, urgent: 1)) == .attempt)
        #expect(machine.next(now: 405, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .wait(until: 1000))
        // A flush (driverctl outbox flush) cuts the unit's own jitter short, never the backend's wait.
        machine.requestFlush()
        #expect(machine.next(now: 999, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .wait(until: 1000))
        _ = machine.attemptFailed(.transient("HTTP 429", retryAfter: 10), now: 1000, random: 0.99, hasCredentials: false)
        #expect(machine.backendQuietUntil == 1010 && machine.retryAt! > 1010)
        machine.requestFlush()
        #expect(machine.next(now: 1010, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .attempt)
        // Without a Retry-After a flush goes at once, as before; a success forgets the backend's wait.
        _ = machine.attemptFailed(.transient("HTTP 503"), now: 1011, random: 0.99, hasCredentials: false)
        #expect(machine.backendQuietUntil == nil)
        #expect(machine.next(now: 1011, cadence: .moving, backlog: .init(pings: 0, items: 1)) == .attempt)
        _ = machine.attemptFailed(.transient("HTTP 429", retryAfter: 10), now: 1012, random: 0, hasCredentials: false)
        _ = machine.attemptSucceeded(now: 1030)
        #expect(machine.backendQuietUntil == nil)
    }

    @Test("a refused token: the configured credentials once, then the driver is told once and nothing goes until a login")
    func unauthorized() {
        var machine = Machine()
        _ = machine.attemptSucceeded(now: 1)
        #expect(machine.attemptFailed(.unauthorized("401"), now: 2, random: 0, hasCredentials: true) == .loginWithCredentials)
        #expect(machine.credentialsFailed("refused") == .announceAuthRequired("refused"))
        #expect(machine.link == .authRequired)
        #expect(machine.next(now: 50, cadence: .moving, backlog: .init(pings: 10, items: 2)) == .waitForLogin)
        machine.requestFlush()
        #expect(machine.next(now: 51, cadence: .moving, backlog: pings) == .waitForLogin)
        // Told once per spell.
        #expect(machine.attemptFailed(.needsLogin("no token"), now: 52, random: 0, hasCredentials: false) == .none)
        machine.loggedIn(driver: "drv-1")
        #expect(machine.next(now: 53, cadence: .moving, backlog: pings) == .attempt)
        // A login always ends in a route sync, even when the link never looked down.
        #expect(machine.attemptSucceeded(now: 53) == .linkRestored)
        #expect(machine.attemptFailed(.needsLogin("too old"), now: 60, random: 0, hasCredentials: false) == .announceAuthRequired("too old"))
    }

    @Test("without credentials a 401 asks the driver at once")
    func noCredentials() {
        var machine = Machine()
        #expect(machine.attemptFailed(.unauthorized("401"), now: 0, random: 0, hasCredentials: false) == .announceAuthRequired("401"))
        #expect(machine.lastError == "the backend refused the credentials (401): log in again")
    }

    @Test("after a logout the driver's queued items wait for that driver; another driver's login does not send them")
    func heldForDriver() {
        var machine = Machine()
        _ = machine.attemptSucceeded(now: 1)
        machine.loggedOut(driver: "drv-1")
        #expect(machine.link == .authRequired && machine.itemsHeldFor == "drv-1")
        #expect(machine.next(now: 2, cadence: .stationary, backlog: pings) == .waitForLogin)
        // An attempt that began before the logout ends: its outcome changes nothing, and the configured credentials are
        // not tried (they would send the driver's items behind the logout).
        #expect(machine.attemptFailed(.needsLogin("no token"), now: 2, random: 0, hasCredentials: true) == .none)
        #expect(machine.attemptFailed(.lost("reset"), now: 2, random: 0, hasCredentials: true) == .none)
        #expect(machine.attemptSucceeded(now: 2) == .none)
        #expect(machine.link == .authRequired && machine.next(now: 2.5, cadence: .stationary, backlog: pings) == .waitForLogin)
        machine.loggedIn(driver: "drv-2")
        #expect(machine.itemsHeld(currentDriver: "drv-2"))
        #expect(machine.next(now: 3, cadence: .stationary, backlog: pings) == .attempt)
        machine.loggedIn(driver: "drv-1")
        #expect(!machine.itemsHeld(currentDriver: "drv-1") && machine.itemsHeldFor == nil)
        // A held owner survives a restart.
        #expect(Machine(itemsHeldFor: "drv-3").itemsHeld(currentDriver: nil))
    }

    @Test("stopping: one final attempt for what is queued while the backend is reachable, else finished at once")
    func stopping() {
        var online = Machine()
        _ = online.attemptSucceeded(now: 1)
        online.stop()
        #expect(online.isStopping)
        #expect(online.next(now: 2, cadence: .stationary, backlog: pings) == .finalAttempt)
        #expect(online.next(now: 3, cadence: .stationary, backlog: pings) == .finished)
        var away = Machine()
        _ = away.attemptFailed(.transient("down"), now: 1, random: 0.5, hasCredentials: false)
        away.stop()
        #expect(away.next(now: 2, cadence: .stationary, backlog: pings) == .finished)
        var empty = Machine()
        _ = empty.attemptSucceeded(now: 1)
        empty.stop()
        #expect(empty.next(now: 2, cadence: .stationary, backlog: idle) == .finished)
    }

    @Test("a heartbeat is due at once when the receiver loses its fix, then every minute; pings end the spell")
    func heartbeat() {
        var machine = Machine(now: 0)
        let noFix = Machine.Backlog(pings: 0, items: 0, gpsWithoutFix: .noFix)
        _ = machine.attemptSucceeded(now: 0)
        #expect(machine.next(now: 1, cadence: .stationary, backlog: noFix) == .attempt)
        machine.heartbeatSent(now: 1, gps: .noFix)
        #expect(machine.next(now: 2, cadence: .stationary, backlog: noFix) == .wait(until: 12))
        #expect(!machine.heartbeatDue(now: 60, gps: .noFix))
        #expect(machine.heartbeatDue(now: 61, gps: .noFix))
        // gpsd itself went away: a new state, told at once.
        #expect(machine.heartbeatDue(now: 3, gps: .lost))
        // Pings waiting are sent first; a heartbeat is never due with a fix.
        #expect(machine.next(now: 70, cadence: .stationary, backlog: .init(pings: 2, items: 0, gpsWithoutFix: .noFix)) == .attempt)
        machine.pingsSent(now: 70)
        #expect(!machine.heartbeatDue(now: 500, gps: nil))
        #expect(machine.heartbeatDue(now: 71, gps: .noFix))
    }
}
