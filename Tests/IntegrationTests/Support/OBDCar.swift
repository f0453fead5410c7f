import Foundation
import Testing

/// A car behind an ELM327 adapter on a loopback TCP port: ELM327-emulator (PyPI, `python -m elm`) run by
/// Support/obd_car.py with a scenario whose values follow a JSON state file, rewritten as the test drives.
final class OBDCar {
    let port: Int
    /// A serial adapter: the emulator's pseudo-terminal (nil: a TCP adapter on `port`).
    private(set) var device: String?
    private let pty: Bool
    let statePath: String
    private var process: Process?
    private let directory: TemporaryDirectory
    private let options: [String]

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".build/tools/venv/bin/python").path
    static let script = repository.appendingPathComponent("Tests/IntegrationTests/Support/obd_car.py").path

    /// `noOdometer`: a car without PID A6; `silent`: an adapter that accepts and never answers.
    init(_ state: [String: Any], port: Int? = nil, noOdometer: Bool = false, silent: Bool = false, pty: Bool = false, start: Bool = true) throws {
        self.pty = pty
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "the tools venv is missing: run scripts/install-deps.sh (make test does)")
        self.port = port ?? GPSFake.freePort()
        directory = TemporaryDirectory("obd-car")
        statePath = directory.file("car.json")
        options = (noOdometer ? ["--no-odometer"] : []) + (silent ? ["--silent"] : [])
        try set(state)
        if start { try plugIn() }
    }

    var address: String { device ?? "127.0.0.1:\(port)" }

    /// What the car reports from now on (written whole, atomically: the emulator reads it at every request).
    func set(_ state: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: state)
        try data.write(to: URL(fileURLWithPath: statePath), options: .atomic)
    }

    /// The requests the adapter received so far, in order (the emulator logs each to elm.log in its directory).
    var requests: [String] {
        let log = (try? String(contentsOfFile: directory.file("elm.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "Received '") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "'" })
        }
    }

    /// The commands the adapter lost waking from `ATLP`, as the chip does (obd_car.py writes each to elm-lost.log).
    var lostWakingUp: [String] {
        // No file: nothing was lost.
        let log = (try? String(contentsOfFile: directory.file("elm-lost.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init)
    }

    /// Starts the adapter (again) on its port.
    func plugIn() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "--state", statePath] + (pty ? [] : ["--port", String(port)]) + options
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        self.process = process
        if pty {
            // The emulator names its pseudo-terminal on the first line of its batch output.
            let batch = directory.file("elm-batch-pty.out")
            try waitUntil("the OBD adapter's pseudo-terminal", timeout: .seconds(20)) {
                let first = (try? String(contentsOfFile: batch, encoding: .utf8))?.split(separator: "\n").first.map(String.init)
                device = first?.hasPrefix("/dev/") == true ? first : nil
                return device != nil
            }
            return
        }
        try waitUntil("the OBD adapter listens on \(port)", timeout: .seconds(20)) { GPSFake.canConnect(port) }
    }

    /// The adapter pulled out: its process killed, its port closed.
    func unplug() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    deinit { unplug() }
}
