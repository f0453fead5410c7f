import ArgumentParser
import DispatchSimCore
import DriverAPI
import DriverDomain

/// A fleet and one backend on virtual time: every unit runs the daemon's own `UplinkStateMachine` (its backoff,
/// Retry-After, start spread and batching rules, not a copy) against dispatch-sim's own `AdmissionDesk` taking C
/// new connections a second. Beside it in the same run: a Traccar-like client (a fixed 30-s retry, no jitter,
/// no Retry-After) and the previous release's rule (full jitter, 1 s doubling to 5 min, Retry-After honoured).
struct FleetBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fleet", abstract: "A fleet's storm on its backend after an outage.")

    @Option(help: "Units in the fleet.") var units = 10_000
    @Option(help: "New connections the backend takes a second (C).") var capacity = 200.0
    @Option(help: "The outage, seconds.") var outageSeconds = 600.0
    @Option(help: "The fleet's setting uplink.backend_connect_rate (the spread window is units / this); default: C.") var connectRateHint: Double?
    @Option(help: "The fleet's setting uplink.retry_cap_seconds.") var retryCap = 120.0
    @Option(help: "Seed of every unit's randomness.") var seed: UInt64 = 1
    @Option(help: "Share of requests the link loses after the outage, in the lossy scenario (0 to 1).") var loss = 0.1

    func run() {
        say("\(units) units, a backend taking C = \(Int(capacity)) new connections a second, each unit moving (a ping a second, batches every 5 s)")
        say("theoretical minimum to connect them all: units / C = \(Self.format(Double(units) / capacity)) s; times below count from the outage's end")
        let scenarios: [(String, Scenario, Double)] = [
            ("an outage of \(Int(outageSeconds)) s, nothing answering (connections refused)", .dark, 0),
            ("an outage of \(Int(outageSeconds)) s answered 503 with Retry-After: the time left", .answered, 0),
            ("the depot's power comes back: every unit boots at once, a 10-minute backlog each", .boot, 0),
            ("an outage of \(Int(outageSeconds)) s, nothing answering, then a link that loses \(Int(loss * 100)) % of requests (each loss costs a connection)", .dark, loss),
        ]
        for (title, scenario, loss) in scenarios {
            say("")
            say("== \(title)")
            say(Report.header)
            for policy in Policy.allCases {
                var world = World(
                    units: units, capacity: capacity, outage: outageSeconds, scenario: scenario, loss: loss, policy: policy,
                    machine: .init(backoff: Backoff(base: 1, cap: retryCap), spreadWindow: Double(units) / (connectRateHint ?? capacity)), seed: seed)
                say(world.run().line(policy.label))
            }
        }
    }

    /// A figure for the table: "never" for a time that never came.
    static func format(_ value: Double, decimals: Int = 1) -> String {
        value.isFinite ? TextFormat.fixed(value, decimals: decimals) : "never"
    }

    enum Scenario { case dark, answered, boot }

    enum Policy: CaseIterable {
        case driverd, previous, traccar
        var label: String {
            switch self {
            case .driverd: "driverd (this code)"
            case .previous: "previous release"
            case .traccar: "fixed 30 s (Traccar)"
            }
        }
    }

    /// One unit's client: the daemon's machine, or a baseline's rule.
    struct Client {
        var machine: UplinkStateMachine
        /// Baselines: consecutive failures, and the time of the next attempt.
        var failures = 0
        var connected = false
        /// Pings waiting: one a second since the last send.
        var sentUpTo: Double
        var everConnectedAfterOutage = false
        /// The backend's Retry-After: the unit must not knock before this.
        var notBefore = -Double.infinity
    }

    struct Report {
        static let header = "policy                 | peak/s first 10 s | peak/s after | peak/100 ms | attempts/unit | 50 % | 99 % | 100 % | drained | refusals/unit | early"
        var peakFirst10 = 0, peakAfter = 0, peak100ms = 0
        var attemptsPerUnit = 0.0, refusalsPerUnit = 0.0
        var connected50 = Double.infinity, connected99 = Double.infinity, connected100 = Double.infinity, drained = Double.infinity
        var early = 0
        var capacity = 0.0

        func line(_ label: String) -> String {
            func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
            let ratio = capacity > 0 ? " (\(FleetBench.format(Double(peakAfter) / capacity, decimals: 2)) C)" : ""
            return [
                pad(label, 22), pad("\(peakFirst10)", 17), pad("\(peakAfter)\(ratio)", 12), pad("\(peak100ms)", 11),
                pad(FleetBench.format(attemptsPerUnit), 13), pad(FleetBench.format(connected50) + " s", 4), pad(FleetBench.format(connected99) + " s", 4),
                pad(FleetBench.format(connected100) + " s", 5), pad(FleetBench.format(drained) + " s", 7), pad(FleetBench.format(refusalsPerUnit, decimals: 2), 13), "\(early)",
            ].joined(separator: " | ")
        }
    }

    /// The fleet, the backend and the clock: events in time order, one per unit.
    struct World {
        let units: Int
        let capacity: Double
        let scenario: Scenario
        /// The share of requests lost after the outage: each closes its connection (the next attempt needs a new one).
        let loss: Double
        let policy: Policy
        var clients: [Client] = []
        var desk: AdmissionDesk
        var random: SplitMix64
        var queue = EventQueue()
        /// The outage: [start, end); the clock stops a while after everything drained.
        let outageStart: Double
        let outageEnd: Double
        let horizon: Double
        var attemptsPerSecond: [Int: Int] = [:]
        var attemptsPer100ms: [Int: Int] = [:]
        var attemptsAfterOutageStart = 0
        var refusals = 0
        var early = 0
        var connectedAt: [Double] = []
        /// When each unit had sent everything queued before the outage ended.
        var drainedAt: [Double] = []

        init(
            units: Int, capacity: Double, outage: Double, scenario: Scenario, loss: Double, policy: Policy, machine: UplinkStateMachine.Configuration,
            seed: UInt64
        ) {
            self.units = units
            self.capacity = capacity
            self.scenario = scenario
            self.loss = loss
            self.policy = policy
            random = SplitMix64(seed: seed)
            desk = AdmissionDesk(limits: AdmissionLimits(connectionsPerSecond: capacity))
            // Booting: the "outage" is the time the depot was dark; the backend is up from the start.
            outageStart = scenario == .boot ? -600 : 60
            outageEnd = scenario == .boot ? 0 : 60 + outage
            horizon = outageEnd + 7200
            if scenario == .answered { desk.outage(forSeconds: outage, now: outageStart) }
            for unit in 0..<units {
                let start: Double = scenario == .boot ? 0 : random.nextUnit() * 5
                let configuration = policy == .driverd ? machine : UplinkStateMachine.Configuration()
                var client = Client(
                    machine: UplinkStateMachine(configuration: configuration, now: start, random: random.nextUnit()),
                    sentUpTo: scenario == .boot ? -600 : start)
                if scenario != .boot {
                    // Connected and up to date before the outage.
                    client.connected = true
                    _ = client.machine.attemptSucceeded(now: start)
                }
                clients.append(client)
                queue.push(start, unit)
            }
        }

        mutating func run() -> Report {
            while let (now, unit) = queue.pop(), now < horizon {
                if let next = step(unit, now: now) { queue.push(next, unit) }
            }
            return report()
        }

        private var outageDark: Bool { scenario == .dark }

        /// One unit's turn: attempt if its client says so; the time of its next turn.
        private mutating func step(_ unit: Int, now: Double) -> Double? {
            var client = clients[unit]
            defer { clients[unit] = client }
            // Reconnected and drained after the outage: what it does next costs the backend no new connection.
            if now > outageEnd, client.connected, client.sentUpTo >= outageEnd { return nil }
            let pings = max(0, Int(now - client.sentUpTo))
            switch policy {
            case .driverd:
                let backlog = UplinkStateMachine.Backlog(pings: pings, items: 0, fullBatch: pings >= 500)
                switch client.machine.next(now: now, cadence: .moving, backlog: backlog) {
                case .wait(let until): return max(until, now + 0.001)
                case .waitForLogin, .finished: return nil
                case .attempt, .finalAttempt, .resend: break
                }
                client.machine.attemptStarted()
                let outcome = attempt(&client, now: now)
                switch outcome {
                case .sent:
                    _ = client.machine.attemptSucceeded(now: now)
                case .refused(let retryAfter):
                    _ = client.machine.attemptFailed(.transient("refused", retryAfter: Double(retryAfter)), now: now, random: random.nextUnit(), hasCredentials: false)
                case .unreachable:
                    _ = client.machine.attemptFailed(.transient("unreachable"), now: now, random: random.nextUnit(), hasCredentials: false)
                case .lost:
                    _ = client.machine.attemptFailed(.lost("reset"), now: now, random: random.nextUnit(), hasCredentials: false)
                }
                return now + 0.001
            case .previous, .traccar:
                switch attempt(&client, now: now) {
                case .sent:
                    client.failures = 0
                    // Draining: the next batch at once while a full one waits, else the 5-s cadence.
                    return now + (now - client.sentUpTo >= 500 ? 0.05 : 5)
                case .refused(let retryAfter):
                    client.failures += 1
                    return now + baselineRetry(failures: client.failures, retryAfter: Double(retryAfter))
                case .unreachable, .lost:
                    client.failures += 1
                    return now + baselineRetry(failures: client.failures, retryAfter: nil)
                }
            }
        }

        /// A baseline's wait after its `failures`-th failure in a row: Traccar's fixed 30 s, or the previous release's
        /// full jitter (1 s doubling to 5 min) after the backend's `Retry-After`.
        private mutating func baselineRetry(failures: Int, retryAfter: Double?) -> Double {
            guard policy == .previous else { return 30 }
            return (retryAfter ?? 0) + Backoff(base: 1, cap: 300).delay(attempt: failures - 1, random: random.nextUnit())
        }

        enum Outcome { case sent, refused(Int), unreachable, lost }

        /// One attempt at `now`: a new connection unless the unit holds one; up to 20 batches of 500 pings.
        private mutating func attempt(_ client: inout Client, now: Double) -> Outcome {
            let inOutage = now >= outageStart && now < outageEnd
            if inOutage, client.connected { client.connected = false }
            if !client.connected {
                attemptsPerSecond[Int((now - outageEnd).rounded(.down)), default: 0] += 1
                attemptsPer100ms[Int(((now - outageEnd) * 10).rounded(.down)), default: 0] += 1
                if now >= outageStart { attemptsAfterOutageStart += 1 }
                if now < client.notBefore { early += 1 }
            }
            if inOutage, outageDark { return .unreachable }
            switch desk.admit(newConnection: !client.connected, now: now) {
            case .refuse(_, let retryAfter):
                refusals += 1
                client.connected = false
                client.notBefore = now + Double(retryAfter)
                return .refused(retryAfter)
            case .accept:
                if now >= outageEnd, loss > 0, random.nextUnit() < loss {
                    client.connected = false
                    return .lost
                }
                client.connected = true
                if now >= outageEnd, !client.everConnectedAfterOutage {
                    client.everConnectedAfterOutage = true
                    connectedAt.append(now - outageEnd)
                }
                let pings = max(0, Int(now - client.sentUpTo))
                let wasBehind = client.sentUpTo < outageEnd
                client.sentUpTo = pings > 20 * 500 ? client.sentUpTo + 20 * 500 : now
                if wasBehind, client.sentUpTo >= outageEnd { drainedAt.append(now - outageEnd) }
                return .sent
            }
        }

        private func report() -> Report {
            var report = Report()
            report.capacity = capacity
            report.peakFirst10 = attemptsPerSecond.filter { (0..<10).contains($0.key) }.values.max() ?? 0
            report.peakAfter = attemptsPerSecond.filter { $0.key >= 10 }.values.max() ?? 0
            report.peak100ms = attemptsPer100ms.filter { $0.key >= 0 }.values.max() ?? 0
            report.attemptsPerUnit = Double(attemptsAfterOutageStart) / Double(units)
            report.refusalsPerUnit = Double(refusals) / Double(units)
            report.early = early
            let times = connectedAt.sorted()
            func share(_ fraction: Double) -> Double {
                let needed = Int((Double(units) * fraction).rounded(.up))
                return times.count >= needed ? times[needed - 1] : .infinity
            }
            report.connected50 = share(0.5)
            report.connected99 = share(0.99)
            report.connected100 = share(1)
            // Drained: every unit has sent what waited from before the outage's end.
            report.drained = drainedAt.count == units ? drainedAt.max() ?? 0 : .infinity
            return report
        }
    }

    /// A binary min-heap of (time, unit).
    struct EventQueue {
        private var heap: [(Double, Int)] = []

        mutating func push(_ time: Double, _ unit: Int) {
            heap.append((time, unit))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].0 < heap[parent].0 else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func pop() -> (Double, Int)? {
            guard !heap.isEmpty else { return nil }
            heap.swapAt(0, heap.count - 1)
            let top = heap.removeLast()
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].0 < heap[smallest].0 { smallest = left }
                if right < heap.count, heap[right].0 < heap[smallest].0 { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
            return top
        }
    }
}
