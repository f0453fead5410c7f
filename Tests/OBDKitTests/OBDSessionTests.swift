import DriverAPI
import DriverDomain
import Testing
@testable import OBDKit

/// The OBD session as a pure machine: fed the replies an ELM327 v1.5 and its clones send (the forms of
/// ELMReplyTests), it must ask what the reader sent before, in the same order, and publish the same events.
@Suite struct OBDSessionTests {
    /// Plays a transcript: each step must be the command the session asks for, answered with the reply given
    /// (nil: no answer within the timeout). Returns every event published on the way and the session's last word.
    struct Player {
        var session = OBDSession()
        var now = 1000.0
        var events: [OBDEvent] = []
        var next: OBDSession.Next = .done

        mutating func take(_ output: OBDSession.Output) {
            events += output.events
            next = output.next
        }

        mutating func play(_ steps: [(command: String, reply: String?)], sourceLocation: SourceLocation = #_sourceLocation) {
            for (command, reply) in steps {
                guard case .send(let asked, _) = next else {
                    Issue.record("expected \(command), the session says \(next)", sourceLocation: sourceLocation)
                    return
                }
                #expect(asked == command, sourceLocation: sourceLocation)
                take(session.received(reply.map { .reply($0) } ?? .timeout, now: now))
            }
        }

        /// Takes the events published so far.
        mutating func published() -> [OBDEvent] {
            defer { events = [] }
            return events
        }
    }

    static let initialisation: [(command: String, reply: String?)] = [
        ("ATZ", "\r\r\rELM327 v1.5\r\r"), ("ATE0", "ATE0\rOK\r\r"), ("ATL0", "OK\r\r"), ("ATS0", "OK\r\r"), ("ATH0", "OK\r\r"),
        ("ATSP0", "OK\r\r"),
    ]
    /// A CAN car (ISO 15765, protocol A6) that answers speed, RPM, run time, fuel and the engine unit's voltage.
    static let canDiscovery: [(command: String, reply: String?)] = [
        ("0100", "SEARCHING...\r41 00 BE 3F A8 13\r\r"), ("0120", "41 20 00 02 00 01\r\r"), ("0140", "41 40 40 00 00 00\r\r"),
        ("ATDPN", "A6\r\r"),
    ]

    static func connectedCANCar() -> Player {
        var player = Player()
        player.take(player.session.connected(now: player.now))
        player.play(initialisation + canDiscovery)
        return player
    }

    @Test("a connection initialises the adapter, finds the vehicle's PIDs group by group and its bus, and says the link is ok")
    func connectAndDiscover() {
        var player = Self.connectedCANCar()
        #expect(player.session.isInitialised)
        #expect(player.next == .done)
        let supported = Set<UInt8>([0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x13, 0x15, 0x1C, 0x1F, 0x20, 0x2F, 0x40, 0x42])
        #expect(player.published() == [.supported(supported), .link(.ok, detail: nil)])
    }

    @Test("on CAN the due PIDs and the voltage go in one request; nothing else is asked")
    func severalInOneRequest() {
        var player = Self.connectedCANCar()
        _ = player.published()
        player.take(player.session.poll(due: [.speedAndRPM, .voltage], mode: .parked, now: player.now))
        player.play([("010D0C42", "41 0D 24 0C 1A F8 42 36 B0\r\r")])
        #expect(player.next == .done)
        #expect(player.published() == [.reading(.speed(10)), .reading(.rpm(1726)), .reading(.voltage(14.0))])
        // An adapter that cannot take several (its answer makes no sense) is asked one PID at a time from then on,
        // and the voltage by ATRV.
        player.take(player.session.poll(due: [.speedAndRPM, .voltage], mode: .parked, now: player.now))
        player.play([("010D0C42", "?\r\r"), ("010D", "41 0D 00\r\r"), ("010C", "41 0C 0C 80\r\r"), ("ATRV", "12.6V\r\r")])
        #expect(player.published() == [.reading(.speed(0)), .reading(.rpm(800)), .reading(.voltage(12.6))])
        player.take(player.session.poll(due: [.speedAndRPM], mode: .parked, now: player.now))
        player.play([("010D", "41 0D 00\r\r"), ("010C", "41 0C 0C 80\r\r")])
        #expect(player.next == .done)
    }

    @Test("protecting the battery: ATLP once a spell, and a read wakes the resting chip with its reset and settings first")
    func restAndWake() {
        var player = Self.connectedCANCar()
        _ = player.published()
        player.take(player.session.poll(due: [], mode: .protecting, now: player.now))
        player.play([("ATLP", "OK\r\r")])
        #expect(player.published() == [.lowPower(accepted: true)] && player.session.asleep)
        // Resting, with nothing due: nothing is sent.
        player.take(player.session.poll(due: [], mode: .protecting, now: player.now))
        #expect(player.next == .done)
        // The voltage falls due: the chip loses the first character (the reset stands for it), then its settings.
        player.take(player.session.poll(due: [.voltage], mode: .protecting, now: player.now))
        player.play(Self.initialisation + [("ATRV", "11.9V\r\r")])
        #expect(player.published() == [.reading(.voltage(11.9))] && !player.session.asleep)
        // Back to sleep after the read, told no second time this spell.
        player.take(player.session.poll(due: [], mode: .protecting, now: player.now))
        player.play([("ATLP", "OK\r\r")])
        #expect(player.published() == [] && player.next == .done)
    }

    @Test("NO DATA twice is no vehicle; it is asked again only after the probe interval, and a reading brings the link back")
    func noDataThenProbe() {
        var player = Player()
        player.take(player.session.connected(now: player.now))
        // An older bus (ISO 9141, protocol 3): one PID a request.
        player.play(Self.initialisation + [("0100", "SEARCHING...\r41 00 BE 3F A8 12\r\r"), ("ATDPN", "A3\r\r")])
        _ = player.published()
        player.take(player.session.poll(due: [.speedAndRPM], mode: .moving(interval: 1), now: player.now))
        player.play([("010D", "NO DATA\r\r"), ("010C", "NO DATA\r\r")])
        #expect(player.published() == [.unavailable(.speed), .unavailable(.rpm), .link(.noVehicle, detail: "NO DATA")])
        // Within the probe interval the vehicle is not asked at all.
        player.now += 5
        player.take(player.session.poll(due: [.speedAndRPM], mode: .moving(interval: 1), now: player.now))
        #expect(player.next == .done)
        // After it, discovery again; it still claims PIDs, so the link stays noVehicle until data comes.
        player.now += 6
        player.take(player.session.poll(due: [.speedAndRPM], mode: .moving(interval: 1), now: player.now))
        player.play([("0100", "41 00 BE 3F A8 12\r\r"), ("ATDPN", "A3\r\r"), ("010D", "41 0D 12\r\r"), ("010C", "41 0C 0F A0\r\r")])
        #expect(player.published() == [
            .supported([0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x13, 0x15, 0x1C, 0x1F]),
            .link(.ok, detail: nil), .reading(.speed(5)), .reading(.rpm(1000)),
        ])
    }

    @Test("the fault codes: the check-engine light, then stored and pending codes (NO DATA for none)")
    func faults() {
        var player = Self.connectedCANCar()
        _ = player.published()
        player.take(player.session.poll(due: [.faults], mode: .parked, now: player.now))
        player.play([("0101", "41 01 83 07 A1 00\r\r"), ("03", "43 02 01 43 03 00\r\r"), ("07", "NO DATA\r\r")])
        #expect(player.published() == [
            .reading(.status(checkEngine: true, storedCodes: 3)), .reading(.faults(codes: ["P0143", "P0300"], pending: false)),
            .reading(.faults(codes: [], pending: true)),
        ])
    }

    @Test("what ends a connection: not an adapter, a silent one, a line full of noise; STOPPED is asked once more")
    func endings() {
        var notAnAdapter = Player()
        notAnAdapter.take(notAnAdapter.session.connected(now: 0))
        notAnAdapter.play([("ATZ", "\r\r"), ("ATE0", "?\r\r")])
        #expect(notAnAdapter.next == .disconnect(OBDError(.notAnAdapter("?"))) && !notAnAdapter.session.isInitialised)

        var silentAtStart = Player()
        silentAtStart.take(silentAtStart.session.connected(now: 0))
        silentAtStart.play([("ATZ", nil)])
        #expect(silentAtStart.next == .disconnect(OBDError(.timeout)))

        // Once running, one timeout is an answer that makes no sense; two in a row end the link.
        var silent = Self.connectedCANCar()
        silent.take(silent.session.poll(due: [.voltage], mode: .parked, now: silent.now))
        silent.play([("ATRV", nil)])
        #expect(silent.next == .done)
        silent.take(silent.session.poll(due: [.voltage], mode: .parked, now: silent.now))
        silent.play([("ATRV", "12.4V\r\r")])
        silent.take(silent.session.poll(due: [.voltage], mode: .parked, now: silent.now))
        silent.play([("ATRV", nil)])
        silent.take(silent.session.poll(due: [.voltage], mode: .parked, now: silent.now))
        silent.play([("ATRV", nil)])
        #expect(silent.next == .disconnect(OBDError(.timeout)))

        var noisy = Self.connectedCANCar()
        for _ in 0..<4 {
            noisy.take(noisy.session.poll(due: [.voltage], mode: .parked, now: noisy.now))
            noisy.play([("ATRV", "\u{1}\u{2}zz\r")])
            #expect(noisy.next == .done)
        }
        noisy.take(noisy.session.poll(due: [.voltage], mode: .parked, now: noisy.now))
        noisy.play([("ATRV", "\u{1}\u{2}zz\r")])
        #expect(noisy.next == .disconnect(OBDError(.notAnAdapter("garbage: \u{1}\u{2}zz"))))

        var stopped = Self.connectedCANCar()
        _ = stopped.published()
        stopped.take(stopped.session.poll(due: [.speedAndRPM], mode: .parked, now: stopped.now))
        stopped.play([("010D0C", "STOPPED\r\r"), ("010D0C", "41 0D 00 0C 0C 80\r\r")])
        #expect(stopped.published() == [.reading(.speed(0)), .reading(.rpm(800))] && stopped.next == .done)
    }
}
