import DriverDomain
import Testing

@Suite("Safety gate")
struct SafetyGateTests {
    @Test("above the limit it is closed; at or below it for 3 s, open; slowing for a corner is not stopping")
    func speed() {
        var gate = SafetyGate(limit: 4.47, staleAfter: 10, settle: 3)
        #expect(gate.state(now: 0) == .unknown && !gate.isOpen(now: 0))
        #expect(gate.observe(speed: 12, now: 1) == nil)
        #expect(gate.state(now: 1) == .moving)
        #expect(gate.observe(speed: 3, now: 2) == nil, "a corner")
        #expect(gate.observe(speed: 9, now: 3) == nil)
        #expect(gate.observe(speed: 4.47, now: 4) == nil)
        #expect(gate.observe(speed: 0.3, now: 5) == nil)
        #expect(gate.state(now: 5) == .stopping && !gate.isOpen(now: 5))
        #expect(gate.observe(speed: 0.2, now: 7) == .opened)
        #expect(gate.isOpen(now: 8) && gate.state(now: 8) == .stationary)
        #expect(gate.observe(speed: 4.5, now: 9) == .closed)
    }

    @Test("while stopping, the gate says when it will settle (the slowest source's); moving, standing or unknown, nothing")
    func settlesIn() {
        var gate = SafetyGate(limit: 4.47, staleAfter: 10, settle: 3)
        #expect(gate.settlesIn(now: 0) == nil)
        _ = gate.observe(speed: 12, now: 1, nextFixWithin: 10)
        #expect(gate.settlesIn(now: 1) == nil)
        _ = gate.observe(speed: 0.1, now: 2, nextFixWithin: 10)
        #expect(gate.settlesIn(now: 2) == 3 && gate.settlesIn(now: 4) == 1)
        // The vehicle's own speed slowed later: the later one decides.
        _ = gate.observe(speed: 0, now: 3, nextFixWithin: 1, source: .vehicle)
        #expect(gate.settlesIn(now: 3) == 3)
        #expect(gate.settlesIn(now: 6) == nil && gate.isOpen(now: 6))
    }

    @Test("a stale fix is unknown, treated as moving unless the ignition is off")
    func stale() {
        var gate = SafetyGate(limit: 4.47, staleAfter: 10, settle: 0)
        _ = gate.observe(speed: 0, now: 100)
        #expect(gate.isOpen(now: 110))
        #expect(gate.state(now: 110.5) == .unknown && !gate.isOpen(now: 110.5))
        #expect(gate.setIgnition(false, now: 111) == nil, "reported open at 100, and open still: the ignition is off")
        #expect(gate.isOpen(now: 500))
        #expect(gate.setIgnition(true, now: 501) == .closed)
        // A parked unit sampling every 60 s: its last fix holds until the next is due (60 × 1.5 + 2).
        _ = gate.setIgnition(nil, now: 501)
        #expect(gate.observe(speed: 0, now: 600, nextFixWithin: 60) == .opened)
        #expect(gate.isOpen(now: 691) && !gate.isOpen(now: 693))
        #expect(gate.observe(speed: nil, now: 700) == .closed, "a fix without a speed says nothing about the speed")
        #expect(gate.state(now: 700) == .unknown)
    }
}
