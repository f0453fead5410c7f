#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import ReaderThread
import Synchronization

/// Reads an ELM327-compatible OBD-II adapter on a thread of its own (blocking serial and socket I/O never touches
/// the Swift concurrency pool), the only code that speaks to it. What to send and what a reply means is the pure
/// `OBDSession`'s (initialisation, discovery, the rounds of queries); this runner sends, publishes its events, and
/// polls on `VehiclePollSchedule`, whose mode the daemon sets from motion, the engine and battery protection.
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

    public typealias Timeouts = OBDSession.Timeouts

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
                try serve(connection) { attempt = 0 }
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

    /// One connection's life, as its `OBDSession` says: initialisation and discovery, then a round of the schedule's
    /// due queries each time some fall due, until the link is lost or the reader stops. `initialised` is called once
    /// the adapter took its settings.
    private func serve(_ connection: ELMConnection, initialised: () -> Void) throws(OBDError) {
        var session = OBDSession(timeouts: timeouts)
        var output = session.connected(now: monotonicSeconds())
        var toldInitialised = false
        while true {
            for event in output.events { handler.handle(event) }
            if session.isInitialised, !toldInitialised {
                toldInitialised = true
                initialised()
            }
            if isStopping { return }
            switch output.next {
            case .send(let command, let timeout):
                let input: OBDSession.Input
                do {
                    input = .reply(try connection.command(command, timeout: timeout))
                } catch let error where error.code == .timeout {
                    input = .timeout
                }
                output = session.received(input, now: monotonicSeconds())
            case .disconnect(let error):
                throw error
            case .done:
                let now = monotonicSeconds()
                let (due, wait, mode) = control.withLock { control in
                    let due = control.schedule.due(now: now)
                    for query in due { control.schedule.ran(query, at: now) }
                    return (due, control.schedule.secondsUntilDue(now: now), control.schedule.mode)
                }
                output = session.poll(due: due, mode: mode, now: now)
                // Nothing to ask now (and no rest to take): sleep until the next query falls due or the mode changes.
                if due.isEmpty, output.next == .done, output.events.isEmpty { sleep(seconds: wait) }
            }
        }
    }

    /// Sleeps up to `seconds` (nil: until woken) or until `setMode` or `stop` wakes the thread.
    private func sleep(seconds: Double?) { runner.wakePipe.wait(seconds: seconds) }
}
