import DriverAPI
import DriverDomain

/// One connection to an ELM327-compatible adapter, as a pure machine: it takes the adapter's replies (and the time)
/// and returns the next command to send, the events to publish, or the end of the connection. No I/O: `OBDReader`
/// owns one per connection and does the sending on its thread; the tests feed it adapter transcripts.
///
/// A connection initialises the adapter (reset, echo, linefeeds, spaces and headers off, automatic protocol),
/// discovers the PIDs the vehicle answers, then runs rounds of the poll schedule's due queries (`poll`): the mode 01
/// PIDs first, together on CAN (speed leads: the safety gate waits for it), then the voltage, then the fault codes.
/// Protecting the battery, it puts the adapter to rest (`ATLP`) between reads and wakes it as the chip needs.
public struct OBDSession: Sendable {
    /// How long the adapter may take: a reset reboots it; the first request searches for the bus protocol
    /// (`SEARCHING...`, seconds); a plain request answers in tens of milliseconds.
    public struct Timeouts: Sendable, Equatable {
        public var command: Double
        public var reset: Double
        public var search: Double

        public init(command: Double = 2, reset: Double = 5, search: Double = 12) {
            self.command = command
            self.reset = reset
            self.search = search
        }
    }

    /// What the adapter did with the last command.
    public enum Input: Sendable, Equatable {
        /// Its reply, up to the prompt.
        case reply(String)
        /// No prompt within the command's timeout.
        case timeout
    }

    /// What to do next.
    public enum Next: Sendable, Equatable {
        case send(String, timeout: Double)
        /// This round is over: wait for the schedule's next due query (or a change of mode).
        case done
        /// The connection is no use (not an adapter, silent, a line full of noise): close it and connect again.
        case disconnect(OBDError)
    }

    public struct Output: Sendable, Equatable {
        public var events: [OBDEvent]
        public var next: Next
    }

    /// `NO DATA` this many times in a row (speed and RPM, the PIDs every car answers while running) is no vehicle.
    static let noDataLimit = 2
    /// A vehicle that does not answer is asked again this often, not at every query.
    static let probeInterval = 10.0
    static let settings = ["ATE0", "ATL0", "ATS0", "ATH0", "ATSP0"]

    let timeouts: Timeouts
    /// The adapter took its settings once on this connection (the reader's backoff starts over).
    public private(set) var isInitialised = false
    public private(set) var supported: Set<UInt8> = []
    private var vehicleAnswers = false
    private var lastDiscovery: Double = 0
    /// Consecutive answers that were neither data nor a known reply, and timeouts: past a few, reconnect.
    private var garbage = 0
    private var timeoutsInARow = 0
    /// Consecutive `NO DATA` answers to PIDs the vehicle claimed: its units went to sleep (ignition off).
    private var noData = 0
    /// `ATLP` was sent this protection spell (told once).
    private var restingSent = false
    /// The adapter took `ATLP` and has not been woken since.
    public private(set) var asleep = false
    /// The vehicle's bus is CAN: mode 01 PIDs go several to a request (one wake-up of the adapter, the bus and the
    /// reader's thread instead of up to six). Off again when an answer to several makes no sense.
    private var severalPIDs = false
    /// The vehicle claims PIDs but answered none (`NO DATA` for everything): it stays `noVehicle` through the probes
    /// until a reading comes, rather than `ok` for ten seconds after each.
    private var claimsWithoutData = false

    /// The work left in this round, first first; each item sends a command or adds the items it stands for.
    private var work: [Work] = []
    /// The command sent and what its reply is for.
    private var awaiting: Awaiting?
    /// This round's mode 01 PIDs not yet read, and those a several-PID answer gave.
    private var left: [OBDPID] = []
    private var answered: Set<OBDPID> = []
    private var events: [OBDEvent] = []

    private enum Work: Sendable {
        case reset
        case setting(Int)
        case discover(base: UInt8, found: Set<UInt8>, problem: String?)
        case discovered(problem: String?)
        case protocolNumber
        case rest
        case wakeIfAsleep
        case awake
        case probeIfDue
        case pidsIfAwake([OBDPID], riding: [OBDPID])
        case several([OBDPID])
        case singlesLeft
        case single(OBDPID, onlyWhileAnswering: Bool)
        case voltageUnlessRead
        case faultsIfVehicle
        case faultList(pending: Bool)
    }

    private struct Awaiting: Sendable {
        let command: String
        let timeout: Double
        let purpose: Work
        /// Through the reply rules (garbage and timeouts counted, `STOPPED` asked once more); the initialisation's
        /// commands are not: any failure there ends the connection.
        let counted: Bool
        var retried = false
    }

    public init(timeouts: Timeouts = Timeouts()) {
        self.timeouts = timeouts
    }

    /// The connection is open: initialise the adapter and discover the vehicle.
    public mutating func connected(now: Double) -> Output {
        work = Self.initialisation + [.discover(base: 0, found: [], problem: nil)]
        return advance(now: now)
    }

    /// A round of the schedule: `due` are the queries that fell due now (the reader marks them run), `mode` the
    /// schedule's mode (protecting the battery, the adapter rests between reads).
    public mutating func poll(due: [VehiclePollSchedule.Query], mode: VehiclePollSchedule.Mode, now: Double) -> Output {
        precondition(awaiting == nil, "poll while a command is in flight")
        work = []
        if mode == .protecting, !asleep {
            work.append(.rest)
        } else if mode != .protecting {
            restingSent = false
        }
        if !due.isEmpty {
            left = []
            answered = []
            work.append(.wakeIfAsleep)
            let pids = due.flatMap(Self.pids(of:))
            if !pids.isEmpty || due.contains(.faults) {
                // The voltage rides along with other PIDs where the engine unit reports it: one request (one wake-up
                // of the adapter, the bus and the reader) instead of two.
                let folded = due.contains(.voltage) && !pids.isEmpty
                work += [.probeIfDue, .pidsIfAwake(pids, riding: folded ? [.moduleVoltage] : [])]
            }
            if due.contains(.voltage) { work.append(.voltageUnlessRead) }
            if due.contains(.faults) { work.append(.faultsIfVehicle) }
        }
        return advance(now: now)
    }

    /// The adapter's answer to the command `next` asked for.
    public mutating func received(_ input: Input, now: Double) -> Output {
        guard var pending = awaiting else { preconditionFailure("a reply with no command in flight") }
        awaiting = nil
        let reply: ELMReply
        switch input {
        case .timeout:
            guard pending.counted else { return Output(events: take(), next: .disconnect(OBDError(.timeout))) }
            timeoutsInARow += 1
            if timeoutsInARow >= 2 { return Output(events: take(), next: .disconnect(OBDError(.timeout))) }
            reply = .garbage("no answer")
        case .reply(let raw):
            let parsed = ELMReply.parse(raw, command: pending.command)
            if pending.counted, parsed == .stopped, !pending.retried {
                pending.retried = true
                awaiting = pending
                return Output(events: take(), next: .send(pending.command, timeout: pending.timeout))
            }
            if pending.counted { timeoutsInARow = 0 }
            reply = parsed
        }
        if pending.counted {
            if case .garbage = reply {
                garbage += 1
                if garbage >= 5 { return Output(events: take(), next: .disconnect(OBDError(.notAnAdapter(Self.describe(reply))))) }
            } else {
                garbage = 0
            }
        }
        if let error = take(reply, for: pending.purpose, now: now) {
            return Output(events: take(), next: .disconnect(error))
        }
        return advance(now: now)
    }

    // MARK: - The work

    private static let initialisation: [Work] = [.reset] + settings.indices.map { .setting($0) }

    /// Runs the work list until a command must be sent or nothing is left.
    private mutating func advance(now: Double) -> Output {
        while !work.isEmpty {
            let item = work.removeFirst()
            switch item {
            case .reset:
                // A reset reboots the chip; what it prints is its name (`ELM327 v1.5`), maybe with echo and noise.
                return send("ATZ", timeout: timeouts.reset, for: item, counted: false)
            case .setting(let index):
                return send(Self.settings[index], timeout: timeouts.command, for: item, counted: false)
            case .discover(let base, _, _):
                if base == 0 { lastDiscovery = now }
                return send("01" + hex(base), timeout: base == 0 ? timeouts.search : timeouts.command, for: item)
            case .discovered(let problem):
                if !vehicleAnswers {
                    events.append(.link(.noVehicle, detail: problem ?? "the vehicle claims no PIDs"))
                } else if !claimsWithoutData {
                    events.append(.link(.ok, detail: nil))
                }
            case .protocolNumber:
                return send("ATDPN", timeout: timeouts.command, for: item)
            case .rest:
                return send("ATLP", timeout: timeouts.command, for: item)
            case .wakeIfAsleep:
                // A resting ELM327 wakes at the first character it receives, loses that command and restarts (its
                // banner, its settings back to the defaults): the reset is the command it loses, then its settings
                // again, and only then the read.
                if asleep { work.insert(contentsOf: Self.initialisation + [.awake], at: 0) }
            case .awake:
                asleep = false
            case .probeIfDue:
                // A vehicle that does not answer (ignition off, a bus that would not initialise) is asked again now
                // and then, not at every query.
                if !vehicleAnswers, now - lastDiscovery >= Self.probeInterval {
                    work.insert(.discover(base: 0, found: [], problem: nil), at: 0)
                }
            case .pidsIfAwake(let pids, let riding):
                guard vehicleAnswers else { continue }
                left = pids
                // On CAN up to six to a request, the rest (and everything on older buses, or when the vehicle's answer
                // to several makes no sense) one by one; `riding` go only in a several-PID request, never alone.
                let claimed = (pids + riding).filter { supported.contains($0.rawValue) }
                var expanded: [Work] = []
                if claimed.count > 1 {
                    for start in stride(from: 0, to: claimed.count, by: 6) {
                        expanded.append(.several(Array(claimed[start..<min(start + 6, claimed.count)])))
                    }
                }
                work.insert(contentsOf: expanded + [.singlesLeft], at: 0)
            case .several(let chunk):
                guard severalPIDs, vehicleAnswers else { continue }
                return send(OBDPID.request(chunk), timeout: timeouts.command, for: item)
            case .singlesLeft:
                // Once the vehicle stops answering, what it said last stands (a trip's end keeps it) until it answers
                // again.
                work.insert(contentsOf: left.map { .single($0, onlyWhileAnswering: true) }, at: 0)
            case .single(let pid, let onlyWhileAnswering):
                if onlyWhileAnswering, !vehicleAnswers { continue }
                guard supported.contains(pid.rawValue) || pid == .status && !supported.isEmpty else {
                    events.append(.unavailable(pid))
                    continue
                }
                return send(pid.request, timeout: timeouts.command, for: item)
            case .voltageUnlessRead:
                if answered.contains(.moduleVoltage) { continue }
                return send("ATRV", timeout: timeouts.command, for: item)
            case .faultsIfVehicle:
                // The check-engine light, then the stored and the pending codes.
                if vehicleAnswers {
                    work.insert(contentsOf: [.single(.status, onlyWhileAnswering: false), .faultList(pending: false), .faultList(pending: true)], at: 0)
                }
            case .faultList(let pending):
                return send(pending ? "07" : "03", timeout: timeouts.command, for: item)
            }
        }
        return Output(events: take(), next: .done)
    }

    private mutating func send(_ command: String, timeout: Double, for purpose: Work, counted: Bool = true) -> Output {
        awaiting = Awaiting(command: command, timeout: timeout, purpose: purpose, counted: counted)
        return Output(events: take(), next: .send(command, timeout: timeout))
    }

    private mutating func take() -> [OBDEvent] {
        defer { events = [] }
        return events
    }

    /// What a reply means for the work it answers; an error ends the connection.
    private mutating func take(_ reply: ELMReply, for purpose: Work, now: Double) -> OBDError? {
        switch purpose {
        case .reset:
            break
        case .setting(let index):
            // An adapter that does not answer `OK` to these is not an ELM327.
            guard reply == .text("OK") else { return OBDError(.notAnAdapter(Self.describe(reply))) }
            if index == Self.settings.count - 1 { isInitialised = true }
        case .discover(let base, var found, var problem):
            if case .frames(let frames) = reply {
                let (pids, more) = OBDDecoding.supported(base: base, frames: frames)
                found.formUnion(pids)
                if more, base < 0xE0 {
                    work.insert(.discover(base: base + 0x20, found: found, problem: problem), at: 0)
                    return nil
                }
            } else if base == 0 {
                problem = Self.describe(reply)
            }
            supported = found
            vehicleAnswers = !found.isEmpty
            events.append(.supported(found))
            work.insert(contentsOf: (vehicleAnswers ? [.protocolNumber] : []) + [.discovered(problem: problem)], at: 0)
        case .protocolNumber:
            if case .text(let text) = reply { severalPIDs = OBDDecoding.isCAN(protocolNumber: text) } else { severalPIDs = false }
        case .rest:
            asleep = reply == .text("OK")
            if !restingSent { events.append(.lowPower(accepted: asleep)) }
            restingSent = true
        case .several(let chunk):
            // `NO DATA` and bus errors are the vehicle's state, which the single requests judge as ever; any other
            // answer without a reading means an adapter or a car that does not take several: one at a time from now.
            if case .frames(let frames) = reply {
                let readings = OBDDecoding.decode(several: chunk, frames: frames)
                if !readings.isEmpty {
                    dataCame()
                    left.removeAll(where: chunk.contains)
                    for pid in chunk { events.append(readings[pid].map { .reading($0) } ?? .unavailable(pid)) }
                    answered.formUnion(readings.keys)
                    return nil
                }
            } else if reply == .noData || reply.isBusError {
                return nil
            }
            severalPIDs = false
        case .single(let pid, _):
            if reply == .noData { noData += 1 }
            if noData >= Self.noDataLimit {
                // Nothing answers any more: the engine unit sleeps, or never answered. Asked again at the probe interval.
                noData = 0
                vehicleAnswers = false
                claimsWithoutData = true
                lastDiscovery = now
                events += [.unavailable(pid), .link(.noVehicle, detail: "NO DATA")]
                return nil
            }
            switch reply {
            case .frames(let frames):
                if let reading = OBDDecoding.decode(pid, frames: frames) {
                    dataCame()
                    events.append(.reading(reading))
                } else {
                    events.append(.unavailable(pid))
                }
            case .busError(let what):
                // The bus went quiet (the ignition went off mid-drive): the adapter is still there.
                vehicleAnswers = false
                lastDiscovery = now
                events.append(.link(.noVehicle, detail: what))
            default:
                events.append(.unavailable(pid))
            }
        case .voltageUnlessRead:
            if case .text(let text) = reply, let volts = OBDDecoding.voltage(text) { events.append(.reading(.voltage(volts))) }
        case .faultList(let pending):
            if case .frames(let frames) = reply, let reading = OBDDecoding.faults(frames: frames, pending: pending) {
                events.append(.reading(reading))
            } else if reply == .noData {
                // Some units answer NO DATA rather than an empty list.
                events.append(.reading(.faults(codes: [], pending: pending)))
            }
        case .discovered, .wakeIfAsleep, .awake, .probeIfDue, .pidsIfAwake, .singlesLeft, .faultsIfVehicle:
            preconditionFailure("no command is sent for \(purpose)")
        }
        return nil
    }

    /// Data came: the `NO DATA` count starts over, and a vehicle that claimed PIDs without answering is back.
    private mutating func dataCame() {
        noData = 0
        if claimsWithoutData {
            claimsWithoutData = false
            events.append(.link(.ok, detail: nil))
        }
    }

    private static func pids(of query: VehiclePollSchedule.Query) -> [OBDPID] {
        switch query {
        case .speedAndRPM: [.speed, .rpm]
        case .fuel: [.fuelLevel]
        case .odometer: [.odometer]
        case .runTime: [.runTime]
        case .voltage, .faults: []
        }
    }

    static func describe(_ reply: ELMReply) -> String {
        switch reply {
        case .frames: "data"
        case .text(let text): text
        case .noData: "NO DATA"
        case .stopped: "STOPPED"
        case .unknownCommand: "?"
        case .busError(let what): what
        case .garbage(let text): text.isEmpty ? "an empty reply" : "garbage: \(text)"
        }
    }
}
