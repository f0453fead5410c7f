#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import ReaderThread
import Synchronization

/// Reads an ELM327-compatible OBD-II adapter on a thread of its own (blocking serial and socket I/O never touches
/// the Swift concurrency pool), the only code that speaks to it: initialisation (reset, echo, linefeeds, spaces
/// and headers off, automatic protocol), supported-PID discovery, then polling on `VehiclePollSchedule`, whose
/// mode the daemon sets from motion, the engine and battery protection.
///
/// Whatever the adapter does (unplugged, silent, slow, garbage, `NO DATA` for everything, a bus that will not
/// initialise) the reader reports a link state and goes on: it reconnects with jittered backoff, forever, until
/// `stop()`. A vehicle that stops answering (ignition off) is `noVehicle`, the adapter still read for its voltage.
public final class OBDReader: Sendable {
    public let address: OBDAdapterAddress
    private let handler: any OBDEventHandler
    private let backoff: Backoff
    private let timeouts: Timeouts
    private let control: Mutex<Control>
    /// The thread, its stop, and the pipe that wakes it when the mode changes.
    private let runner = ReaderRunner()

    /// How long the adapter may take: a reset reboots it; the first request searches for the bus protocol
    /// (`SEARCHING...`, seconds); a plain request answers in tens of milliseconds.
    public struct Timeouts: Sendable {
        public var command: Double
        public var reset: Double
        public var search: Double

        public init(command: Double = 2, reset: Double = 5, search: Double = 12) {
            self.command = command
            self.reset = reset
            self.search = search
        }
    }

    private struct Control {
        var schedule: VehiclePollSchedule
    }

    public init(
        address: OBDAdapterAddress, handler: any OBDEventHandler, schedule: VehiclePollSchedule = VehiclePollSchedule(),
        backoff: Backoff = Backoff(base: 1, cap: 60), timeouts: Timeouts = Timeouts()
    ) {
        self.address = address
        self.handler = handler
        self.backoff = backoff
        self.timeouts = timeouts
        control = Mutex(Control(schedule: schedule))
    }

    public func start() { runner.start(named: "obd-reader") { self.run() } }

    public func stop() {
        runner.stop()
    }

    /// What to poll from now on; wakes the thread only when the mode changed.
    public func setMode(_ mode: VehiclePollSchedule.Mode) {
        let changed = control.withLock { control -> Bool in
            guard control.schedule.mode != mode else { return false }
            control.schedule.setMode(mode)
            return true
        }
        if changed { wake() }
    }

    public var mode: VehiclePollSchedule.Mode { control.withLock { $0.schedule.mode } }

    private func wake() { runner.wakePipe.wake() }

    private var isStopping: Bool { runner.isStopping }

    // MARK: - The thread

    private func run() {
        var attempt = 0
        var generator = SystemRandomNumberGenerator()
        while !isStopping {
            handler.handle(.link(.connecting, detail: nil))
            let connection = ELMConnection()
            var detail: String
            do {
                try connection.open(address)
                try initialise(connection)
                attempt = 0
                try serve(connection)
                detail = "stopped"
            } catch {
                detail = error.description
            }
            connection.close()
            guard !isStopping else { break }
            handler.handle(.link(.absent, detail: detail))
            let delay = backoff.delay(attempt: attempt, random: Double.random(in: 0..<1, using: &generator))
            attempt += 1
            // At least a second: an adapter that accepts and drops at once must not make this spin.
            sleep(seconds: max(1, delay))
        }
    }

    /// Reset, then echo, linefeeds, spaces and headers off, and the protocol found automatically. An adapter
    /// that does not answer `OK` to these is not an ELM327.
    private func initialise(_ connection: ELMConnection) throws(OBDError) {
        // A reset reboots the chip; what it prints is its name (`ELM327 v1.5`), maybe with echo and noise.
        _ = try connection.command("ATZ", timeout: timeouts.reset)
        for command in ["ATE0", "ATL0", "ATS0", "ATH0", "ATSP0"] {
            let reply = ELMReply.parse(try connection.command(command, timeout: timeouts.command), command: command)
            guard reply == .text("OK") else { throw OBDError(.notAnAdapter(Self.describe(reply))) }
        }
    }

    /// One connection's life: discovery, then the schedule's queries until the link is lost or the reader stops.
    private func serve(_ connection: ELMConnection) throws(OBDError) {
        var session = Session()
        try discover(connection, &session)
        while true {
            if isStopping { return }
            let (due, wait, mode) = control.withLock { control in
                let now = monotonicSeconds()
                return (control.schedule.due(now: now), control.schedule.secondsUntilDue(now: now), control.schedule.mode)
            }
            // Protecting the battery, the adapter rests between its reads (ATLP), put back to sleep after each; the
            // journal hears of it once a spell.
            if mode == .protecting, !session.asleep {
                let reply = ELMReply.parse(try connection.command("ATLP", timeout: timeouts.command), command: "ATLP")
                session.asleep = reply == .text("OK")
                if !session.restingSent { handler.handle(.lowPower(accepted: session.asleep)) }
                session.restingSent = true
            } else if mode != .protecting {
                session.restingSent = false
            }
            guard !due.isEmpty else {
                sleep(seconds: wait)
                continue
            }
            // A sleeping ELM327 wakes at the first character it receives, loses that command and restarts (its banner,
            // its settings back to the defaults): the reset of `initialise` is the command it loses, then its
            // settings again, and only then the read.
            if session.asleep {
                try initialise(connection)
                session.asleep = false
            }
            let now = monotonicSeconds()
            control.withLock { control in for query in due { control.schedule.ran(query, at: now) } }
            try run(due, connection, &session)
        }
    }

    /// What one connection learnt and counts.
    private struct Session {
        var supported: Set<UInt8> = []
        var vehicleAnswers = false
        var lastDiscovery: Double = 0
        /// Consecutive answers that were neither data nor a known reply, and timeouts: past a few, reconnect.
        var garbage = 0
        var timeouts = 0
        /// Consecutive `NO DATA` answers to PIDs the vehicle claimed: its units went to sleep (ignition off).
        var noData = 0
        /// `ATLP` was sent this protection spell (told once).
        var restingSent = false
        /// The adapter took `ATLP` and has not been woken since.
        var asleep = false
        /// The vehicle's bus is CAN: mode 01 PIDs go several to a request (one wake-up of the adapter, the bus
        /// and this thread instead of up to six). Off again when an answer to several makes no sense.
        var severalPIDs = false
        /// The vehicle claims PIDs but answered none (`NO DATA` for everything): it stays `noVehicle` through
        /// the probes until a reading comes, rather than `ok` for ten seconds after each.
        var claimsWithoutData = false
    }

    private static let probeInterval = 10.0
    /// `NO DATA` this many times in a row (speed and RPM, the PIDs every car answers while running) is no vehicle.
    private static let noDataLimit = 2

    /// Asks which PIDs the vehicle answers (0100, then 0120... while the previous group says there are more).
    private func discover(_ connection: ELMConnection, _ session: inout Session) throws(OBDError) {
        session.lastDiscovery = monotonicSeconds()
        var supported = Set<UInt8>()
        var base: UInt8 = 0x00
        var problem: String? = nil
        while true {
            let command = "01" + hex(base)
            let reply = try ask(connection, command, timeout: base == 0 ? timeouts.search : timeouts.command, &session)
            guard case .frames(let frames) = reply else {
                if base == 0 { problem = Self.describe(reply) }
                break
            }
            let (pids, more) = OBDDecoding.supported(base: base, frames: frames)
            supported.formUnion(pids)
            guard more, base < 0xE0 else { break }
            base += 0x20
        }
        session.supported = supported
        session.vehicleAnswers = !supported.isEmpty
        handler.handle(.supported(supported))
        if session.vehicleAnswers {
            let reply = try ask(connection, "ATDPN", timeout: timeouts.command, &session)
            if case .text(let text) = reply { session.severalPIDs = OBDDecoding.isCAN(protocolNumber: text) } else { session.severalPIDs = false }
        }
        if !session.vehicleAnswers {
            handler.handle(.link(.noVehicle, detail: problem ?? "the vehicle claims no PIDs"))
        } else if !session.claimsWithoutData {
            handler.handle(.link(.ok, detail: nil))
        }
    }

    /// The due queries: the mode 01 PIDs first, together (speed leads: the safety gate waits for it), then the
    /// voltage, then the fault codes.
    private func run(_ queries: [VehiclePollSchedule.Query], _ connection: ELMConnection, _ session: inout Session) throws(OBDError) {
        let pids = queries.flatMap(Self.pids(of:))
        var voltageRead = false
        if !pids.isEmpty || queries.contains(.faults), try vehicleAwake(connection, &session) {
            // The voltage rides along with other PIDs where the engine unit reports it: one request (one wake-up of
            // the adapter, the bus and this thread) instead of two.
            let folded = queries.contains(.voltage) && !pids.isEmpty && session.severalPIDs
            voltageRead = try read(pids, riding: folded ? [.moduleVoltage] : [], connection, &session).contains(.moduleVoltage)
        }
        if queries.contains(.voltage), !voltageRead {
            let reply = try ask(connection, "ATRV", timeout: timeouts.command, &session)
            if case .text(let text) = reply, let volts = OBDDecoding.voltage(text) { handler.handle(.reading(.voltage(volts))) }
        }
        if queries.contains(.faults), session.vehicleAnswers { try readFaults(connection, &session) }
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

    /// Whether the vehicle answers; while it does not (ignition off, a bus that would not initialise) it is asked
    /// again now and then, not at every query.
    private func vehicleAwake(_ connection: ELMConnection, _ session: inout Session) throws(OBDError) -> Bool {
        if session.vehicleAnswers { return true }
        guard monotonicSeconds() - session.lastDiscovery >= Self.probeInterval else { return false }
        try discover(connection, &session)
        return session.vehicleAnswers
    }

    /// The stored and pending codes and the check-engine light.
    private func readFaults(_ connection: ELMConnection, _ session: inout Session) throws(OBDError) {
        try read(.status, connection, &session)
        for pending in [false, true] {
            let command = pending ? "07" : "03"
            let reply = try ask(connection, command, timeout: timeouts.command, &session)
            if case .frames(let frames) = reply, let reading = OBDDecoding.faults(frames: frames, pending: pending) {
                handler.handle(.reading(reading))
            } else if reply == .noData {
                // Some units answer NO DATA rather than an empty list.
                handler.handle(.reading(.faults(codes: [], pending: pending)))
            }
        }
    }

    /// Mode 01 PIDs: on CAN up to six to a request, the rest (and everything on older buses, or when the
    /// vehicle's answer to several makes no sense) one by one.
    /// `riding` go only in a several-PID request, never alone. Returns the PIDs that gave a reading in a several-PID
    /// answer.
    @discardableResult
    private func read(
        _ pids: [OBDPID], riding: [OBDPID] = [], _ connection: ELMConnection, _ session: inout Session
    ) throws(OBDError) -> Set<OBDPID> {
        var left = pids
        var answered = Set<OBDPID>()
        let claimed = (pids + riding).filter { session.supported.contains($0.rawValue) }
        if claimed.count > 1 {
            for start in stride(from: 0, to: claimed.count, by: 6) where session.severalPIDs && session.vehicleAnswers {
                let chunk = Array(claimed[start..<min(start + 6, claimed.count)])
                guard let readings = try readSeveral(chunk, connection, &session) else { continue }
                left.removeAll(where: chunk.contains)
                for pid in chunk { handler.handle(readings[pid].map { .reading($0) } ?? .unavailable(pid)) }
                answered.formUnion(readings.keys)
            }
        }
        // Once the vehicle stops answering, what it said last stands (a trip's end keeps it) until it answers again.
        for pid in left where session.vehicleAnswers { try read(pid, connection, &session) }
        return answered
    }

    /// One request for several PIDs; nil when its answer gives none of them, and they are asked one by one. `NO DATA`
    /// and bus errors are the vehicle's state, which the single requests judge as ever; any other answer means an
    /// adapter or a car that does not take several, asked one PID at a time from then on.
    private func readSeveral(_ pids: [OBDPID], _ connection: ELMConnection, _ session: inout Session) throws(OBDError) -> [OBDPID: OBDReading]? {
        let reply = try ask(connection, OBDPID.request(pids), timeout: timeouts.command, &session)
        if case .frames(let frames) = reply {
            let readings = OBDDecoding.decode(several: pids, frames: frames)
            if !readings.isEmpty {
                answered(&session)
                return readings
            }
        } else if reply == .noData || reply.isBusError {
            return nil
        }
        session.severalPIDs = false
        return nil
    }

    /// Data came: the `NO DATA` count starts over, and a vehicle that claimed PIDs without answering is back.
    private func answered(_ session: inout Session) {
        session.noData = 0
        if session.claimsWithoutData {
            session.claimsWithoutData = false
            handler.handle(.link(.ok, detail: nil))
        }
    }

    private func read(_ pid: OBDPID, _ connection: ELMConnection, _ session: inout Session) throws(OBDError) {
        guard session.supported.contains(pid.rawValue) || pid == .status && !session.supported.isEmpty else {
            handler.handle(.unavailable(pid))
            return
        }
        let reply = try ask(connection, pid.request, timeout: timeouts.command, &session)
        if reply == .noData { session.noData += 1 }
        if session.noData >= Self.noDataLimit {
            // Nothing answers any more: the engine unit sleeps, or never answered. Asked again at the probe interval.
            session.noData = 0
            session.vehicleAnswers = false
            session.claimsWithoutData = true
            session.lastDiscovery = monotonicSeconds()
            handler.handle(.unavailable(pid))
            handler.handle(.link(.noVehicle, detail: "NO DATA"))
            return
        }
        switch reply {
        case .frames(let frames):
            if let reading = OBDDecoding.decode(pid, frames: frames) {
                answered(&session)
                handler.handle(.reading(reading))
            } else {
                handler.handle(.unavailable(pid))
            }
        case .busError(let what):
            // The bus went quiet (the ignition went off mid-drive): the adapter is still there.
            session.vehicleAnswers = false
            session.lastDiscovery = monotonicSeconds()
            handler.handle(.link(.noVehicle, detail: what))
        default:
            handler.handle(.unavailable(pid))
        }
    }

    /// One command and its parsed reply; counts garbage and timeouts, and gives up on the link past a few in a row
    /// (a silent adapter, a line full of noise). `STOPPED` is asked once more.
    private func ask(_ connection: ELMConnection, _ command: String, timeout: Double, _ session: inout Session) throws(OBDError) -> ELMReply {
        var reply: ELMReply
        do {
            reply = ELMReply.parse(try connection.command(command, timeout: timeout), command: command)
            if reply == .stopped { reply = ELMReply.parse(try connection.command(command, timeout: timeout), command: command) }
            session.timeouts = 0
        } catch let error where error.code == .timeout {
            session.timeouts += 1
            if session.timeouts >= 2 { throw error }
            return .garbage("no answer")
        }
        if case .garbage = reply {
            session.garbage += 1
            if session.garbage >= 5 { throw OBDError(.notAnAdapter(Self.describe(reply))) }
        } else {
            session.garbage = 0
        }
        return reply
    }

    private static func describe(_ reply: ELMReply) -> String {
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

    /// Sleeps up to `seconds` (nil: until woken) or until `setMode` or `stop` wakes the thread.
    private func sleep(seconds: Double?) { runner.wakePipe.wait(seconds: seconds) }
}
