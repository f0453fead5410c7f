#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import ReaderThread
import Synchronization

/// A receiver log played in real time to a real gpsd, as a receiver sends it: each epoch's sentences at once, at
/// its own time after the first (from the RMC or GGA clock), on a pseudo-terminal gpsd reads as its device. The
/// log starts over at its end.
///
/// gpsfake's `-c` is a delay per sentence, and each sentence costs it more than that: a log of four sentences an
/// epoch ran at 0.84 of real time here, so a receiver's 10-s sample came every 12 s and the daemon woke a second
/// time for each one (fix times said it was not due yet). Paced by the clock, gpsd sees the receiver's rate.
final class RealTimeReceiver: Sendable {
    let port = Int.random(in: 30000...39000)
    private let gpsd: Process
    private let stopped = Atomic<Bool>(false)

    init(log: String, scratch: String) throws {
        let epochs = try Self.epochs(log)
        guard !epochs.isEmpty else { throw ValidationError("\(log) holds no timed NMEA sentences") }
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0, let name = ttyname(slave) else {
            throw ValidationError("no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let device = String(cString: name)
        // A receiver's bytes that nobody reads are lost, never a feeder stuck on a full buffer.
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        // gpsd drops root for its own user: the device must stay readable to it (gpsfake does the same).
        chmod(device, 0o666)
        // Raw, so the terminal layer changes nothing gpsd reads (gpsfake's setting).
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        close(slave)
        gpsd = try spawn(
            "/usr/sbin/gpsd", ["-b", "-N", "-n", "-S", String(port), "-F", scratch + "/gpsd.sock", device],
            environment: ["GPSD_SHM_KEY": String(format: "0x4770%04X", port)], quiet: true)
        // The feeder owns the pseudo-terminal from here: it closes it when it sees the stop.
        let terminal = master
        Thread { [self] in
            defer { close(terminal) }
            var start = monotonicSeconds()
            let length = (epochs.last?.at ?? 0) + 1
            while true {
                for epoch in epochs {
                    let due = start + epoch.at
                    while monotonicSeconds() < due {
                        if stopped.load(ordering: .relaxed) { return }
                        usleep(UInt32(max(0, min(due - monotonicSeconds(), 1)) * 1_000_000))
                    }
                    if stopped.load(ordering: .relaxed) { return }
                    _ = epoch.bytes.withUnsafeBytes { write(terminal, $0.baseAddress, $0.count) }
                }
                start += length
            }
        }.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        kill(gpsd.processIdentifier, SIGKILL)
        gpsd.waitUntilExit()
    }

    /// One epoch of the log: its sentences, and its time in seconds after the first epoch.
    struct Epoch {
        var at: Double
        var bytes: [UInt8]
    }

    /// The log's sentences grouped by the clock of their RMC or GGA (those without a clock go with the epoch before).
    static func epochs(_ log: String) throws -> [Epoch] {
        let text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: log)), as: UTF8.self)
        var epochs: [Epoch] = []
        var first: Double?
        var previous: Double?
        var dayOffset = 0.0
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("$") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let type = fields.first?.suffix(3)
            if type == "RMC" || type == "GGA", fields.count > 1, let clock = clock(fields[1]) {
                // Past midnight the clock starts again from 0.
                if let previous, clock + dayOffset < previous - 43200 { dayOffset += 86400 }
                let time = clock + dayOffset
                if time != previous {
                    first = first ?? time
                    epochs.append(Epoch(at: time - (first ?? time), bytes: []))
                    previous = time
                }
            }
            guard !epochs.isEmpty else { continue }
            epochs[epochs.count - 1].bytes += Array(line.utf8) + [13, 10]
        }
        return epochs
    }

    private static func clock(_ field: Substring) -> Double? {
        guard field.count >= 6, let hh = Double(field.prefix(2)), let mm = Double(field.dropFirst(2).prefix(2)),
              let ss = Double(field.dropFirst(4))
        else { return nil }
        return hh * 3600 + mm * 60 + ss
    }
}
