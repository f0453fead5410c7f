import DispatchSimCore
import Testing

@Suite("Admission desk")
struct AdmissionDeskTests {
    @Test("new connections past the rate in a second are refused with Retry-After booking the next free slot; held connections pass")
    func connections() {
        var desk = AdmissionDesk(limits: AdmissionLimits(connectionsPerSecond: 2))
        #expect(desk.admit(newConnection: true, now: 0) == .accept)
        #expect(desk.admit(newConnection: true, now: 0) == .accept)
        // Ten more at once: told to come back at 0.5-s slots, so they are spread over what the backend takes.
        let waits = (0..<10).map { _ -> Int in
            guard case .refuse(429, let wait) = desk.admit(newConnection: true, now: 0.1) else { return -1 }
            return wait
        }
        #expect(waits == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5])
        #expect(desk.admit(newConnection: false, now: 0.1) == .accept)
        // What a second took is what it promised: the next connection waits for the next second.
        #expect(desk.admit(newConnection: true, now: 0.6) != .accept)
        #expect(desk.admit(newConnection: true, now: 1.0) == .accept)
        #expect(desk.seconds.map(\.connectionAttempts) == [13, 1])
        #expect(desk.seconds.map(\.connectionsAccepted) == [2, 1])
        #expect(desk.seconds.map(\.refused) == [11, 0])
        // A backend idle for a minute takes one second's worth, not a minute's.
        #expect((0..<3).map { _ in desk.admit(newConnection: true, now: 60) }.filter { $0 == .accept }.count == 2)
        #expect(desk.peak.connectionAttempts == 13)
        desk.refusedUnanswered(now: 61)
        #expect(desk.seconds.last == { var second = AdmissionSecond(second: 61); second.connectionAttempts = 1; second.refused = 1; return second }())
    }

    @Test("requests a second; a fixed Retry-After; 503; an outage answers 503 with the time left and ends")
    func requestsAndOutage() {
        var desk = AdmissionDesk(limits: AdmissionLimits(requestsPerSecond: 1, status: 503, retryAfterSeconds: 7))
        #expect(desk.admit(newConnection: false, now: 10) == .accept)
        #expect(desk.admit(newConnection: false, now: 10) == .refuse(status: 503, retryAfter: 7))
        desk.outage(forSeconds: 600, now: 20)
        #expect(desk.admit(newConnection: false, now: 500.5) == .refuse(status: 503, retryAfter: 120))
        #expect(desk.admit(newConnection: false, now: 620) == .accept)
        desk.outage(forSeconds: 100, now: 700)
        desk.outage(forSeconds: 0, now: 701)
        #expect(desk.admit(newConnection: false, now: 702) == .accept)
    }

    @Test("the backend's own Retry-After never passes 10 minutes; limits are checked")
    func bounds() {
        var desk = AdmissionDesk(limits: AdmissionLimits(connectionsPerSecond: 0.001))
        _ = desk.admit(newConnection: true, now: 0)
        for _ in 0..<50 { _ = desk.admit(newConnection: true, now: 0) }
        #expect(desk.admit(newConnection: true, now: 0) == .refuse(status: 429, retryAfter: 600))
        #expect(AdmissionLimits(connectionsPerSecond: 0, status: 200, retryAfterSeconds: -1).problems().count == 3)
        #expect(AdmissionLimits(connectionsPerSecond: 200).problems().isEmpty)
    }
}
