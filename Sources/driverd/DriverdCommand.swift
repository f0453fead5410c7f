import ArgumentParser
import RuntimeMetadata
import DriverAPI
import DriverDaemon
import DriverDomain
import DriverctlCommands
import DriverUpdater
import NIOCore
import NIOPosix

@main
enum DriverdEntry {
    /// Synchronous on purpose: nothing may start a thread before the shutdown signals are blocked.
    static func main() {
        // One binary, two programs: the package installs driverctl as a link to driverd (one copy of the Swift
        // runtime and the libraries both use instead of two).
        let name = CommandLine.arguments.first.flatMap { $0.split(separator: "/").last }.map(String.init)
        if name == "driverctl" {
            Driverctl.main()
            return
        }
        // And the root side of self-update, a third name (driverd-update.service runs it).
        if name == "driverd-update" {
            UpdaterCommand.main()
            return
        }
        // Every thread inherits the mask, so only SignalWaiter's thread ever sees SIGTERM and SIGINT.
        SignalWaiter.blockShutdownSignals()
        // Over a file-size limit a write must fail with EFBIG (SQLite reports "disk full" and keeps what it had),
        // not kill the daemon.
        signal(SIGXFSZ, SIG_IGN)
        // Before any event loop connects: Swift's runtime can crash when two threads build this metadata at once.
        RuntimeMetadata.instantiateHTTPClientTypes()
        // The daemon is I/O-light: two event loops at most (one served 50 RPC clients at 2.3× a raw echo's p99, two
        // at 1.65×, and waking no more often), two threads for blocking file work. Measured with `driverd-bench rpc`.
        NIOSingletons.groupLoopCountSuggestion = min(2, System.coreCount)
        NIOSingletons.blockingPoolThreadCountSuggestion = 2
        // Run Swift Concurrency on NIO's event loops instead of libdispatch's worker pool (see ConcurrencyOnNIO).
        if !ConcurrencyOnNIO.install() {
            printError("driverd: warning: Swift Concurrency runs on libdispatch's pool (another global-executor hook was set)")
        }
        let done = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Int32.self)
        done.completeWithTask { await DriverdCommand.exitStatus() }
        let status: Int32
        do {
            status = try done.futureResult.wait()
        } catch {
            // exitStatus() does not throw and the singleton group is never shut down: said, should it ever happen.
            printError("driverd: the run ended without its exit status: \(error)")
            status = 1
        }
        // `_exit`, never `exit`: the daemon has stopped gracefully (its final flush is on disk), but an event loop may
        // still be finishing work it started (a WebSocket connect cannot be cancelled), and `exit` would run the
        // process's destructors under it. (The soak's crashes once blamed on exit were the metadata race
        // RuntimeMetadata closes.)
        fflush(nil)
        _exit(status)
    }
}

struct DriverdCommand: AsyncParsableCommand {
    /// What `main()` does, without its `exit`: parses, runs, and returns the exit status (help and errors printed
    /// as swift-argument-parser prints them).
    static func exitStatus() async -> Int32 {
        do {
            var command = try parseAsRoot()
            if var daemon = command as? DriverdCommand { try await daemon.run() } else { try command.run() }
            return 0
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == .success { print(message) } else { printError(message) }
            }
            return code.rawValue
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "driverd",
        abstract: "The in-vehicle agent of a delivery fleet: GPS, delivery workflow and a durable uplink.",
        discussion: """
            Serves a JSON-RPC 2.0 API on a Unix socket for driverctl and other front ends. Flags override the \
            configuration file, /etc/driverd/driverd.toml, whose comments document every key; check a change \
            with --check-config. The state (the SQLite outbox, tasks, the photo spool, tokens) lives in \
            /var/lib/driverd. Under systemd (driverd.service, driverd.socket) it reports readiness and status \
            and feeds the watchdog; SIGTERM stops it gracefully after a final flush. Its journal entries carry \
            MESSAGE_IDs that journalctl -x explains. For support: driverctl diag.
            """,
        version: DaemonVersion.current)

    @Option(name: .long, help: ArgumentHelp("Configuration file (TOML); an absent file means the defaults.", valueName: "path"))
    var config = "/etc/driverd/driverd.toml"

    @Option(name: .long, help: ArgumentHelp("Unix socket of the local API (default /run/driverd/driverd.sock).", valueName: "path"))
    var socket: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("State directory (default /var/lib/driverd).", valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .long, help: ArgumentHelp("gpsd's address (default 127.0.0.1:2947).", valueName: "host:port"))
    var gpsd: String?

    @Option(name: .long, help: ArgumentHelp("The backend's base URL (https://…; http:// only to loopback).", valueName: "url"))
    var backend: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical."))
    var logLevel: LogLevel?

    @Option(name: .customLong("log-target"), help: ArgumentHelp("auto, journal or stderr."))
    var logTarget: LogTarget?

    @Flag(name: .customLong("check-config"), help: "Validate the configuration, print the result and exit.")
    var checkConfig = false

    mutating func run() async throws {
        var parsed: DaemonConfig.Parsed
        let values: [String: ConfigValue]?
        var overrides = ConfigOverrides()
        do {
            values = try ConfigFile.load(path: config)
        } catch {
            printError("driverd: \(error)")
            throw ExitCode(2)
        }
        overrides.socketPath = socket
        overrides.stateDirectory = stateDirectory
        overrides.logLevel = logLevel
        overrides.logTarget = logTarget
        if let gpsd {
            guard isHostPort(gpsd) else {
                printError("driverd: --gpsd \(gpsd): expected HOST:PORT, e.g. 127.0.0.1:2947")
                throw ExitCode(2)
            }
            overrides.gpsd = gpsd
        }
        if let backend {
            guard DaemonConfig.isBackendURL(backend) else {
                printError("driverd: --backend \(backend): expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost)")
                throw ExitCode(2)
            }
            overrides.backendURL = backend
        }
        let layers = ConfigLayers(file: values ?? [:], overrides: overrides)
        parsed = layers.parse()
        if let warning = ConfigFile.exposedSecretWarning(path: config, config: parsed.config) { parsed.warnings.append(warning) }

        if checkConfig {
            // Compiler style, one problem per line, so an operator (or a provisioning script) sees every one at once.
            for error in parsed.errors { printError("\(config): error: \(error)") }
            for warning in parsed.warnings { printError("\(config): warning: \(warning)") }
            let summary = values == nil ? "not found, the built-in defaults apply" : "\(DaemonConfig.knownKeys.count) keys known"
            guard parsed.errors.isEmpty else {
                printError("\(config): \(counted(parsed.errors.count, "error")), \(counted(parsed.warnings.count, "warning"))")
                throw ExitCode(2)
            }
            print(parsed.warnings.isEmpty ? "\(config): OK (\(summary))" : "\(config): OK with \(counted(parsed.warnings.count, "warning")) (\(summary))")
            return
        }
        guard parsed.errors.isEmpty else {
            for error in parsed.errors { printError("driverd: \(config): \(error)") }
            throw ExitCode(2)
        }
        let outcome: Daemon.Outcome
        do {
            // driverctl's bundle maker: the fleet's requested bundle is the one `driverctl diag --bundle` writes.
            outcome = try await Daemon.run(layers: layers, configPath: config, configWarnings: parsed.warnings) { report, window, lines in
                try DiagBundle.make(report, windowSeconds: window, maxJournalLines: lines).data
            }
        } catch let error as Daemon.StartupError {
            printError("driverd: \(error)")
            throw ExitCode(error.exitStatus)
        } catch {
            printError("driverd: \(error)")
            throw ExitCode(1)
        }
        if case .restartToApply(let version) = outcome {
            // EX_TEMPFAIL: systemd (Restart=on-failure) or any supervisor starts driverd again, now with it.
            printError("driverd: stopped to apply remote configuration v\(version); start me again (systemd does)")
            throw ExitCode(75)
        }
    }
}

private func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}

// LogLevel's conformance comes with DriverctlCommands (driverctl log-level takes one too).
extension LogTarget: ExpressibleByArgument {}
