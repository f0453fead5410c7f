import ArgumentParser
import DriverDaemon
import DriverDomain
#if canImport(Glibc)
import Glibc
#endif

/// `driverd-update`, run by driverd-update.service (root): installs the release driverd downloaded and keeps it
/// only when the new driverd is healthy.
public struct UpdaterCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "driverd-update",
        abstract: "Install the release driverd downloaded; keep it only when the new driverd is healthy (run by driverd-update.service).")

    @Option(help: ArgumentHelp("driverd's configuration file (update.public_key, update.healthy_seconds, rpc.socket).", valueName: "path"))
    var config = "/etc/driverd/driverd.toml"

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("driverd-update's own state directory.", valueName: "dir"))
    var stateDirectory = "/var/lib/driverd-update"

    public init() {}

    public func run() throws {
        let parsed: DaemonConfig
        do {
            parsed = DaemonConfig.parse(try ConfigFile.load(path: config) ?? [:]).config
        } catch {
            print("driverd-update: \(error)")
            throw ExitCode(2)
        }
        setenv("DEBIAN_FRONTEND", "noninteractive", 1)
        setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1)
        let updater = Updater(
            settings: .init(
                publicKey: parsed.updatePublicKey, healthySeconds: parsed.updateHealthySeconds, socketPath: parsed.socketPath,
                requestDirectory: parsed.stateDirectory + "/update", stateDirectory: stateDirectory),
            say: { line in
                // Straight to the journal's pipe, a line at a time (stdout would buffer it).
                let text = Array("driverd-update: \(line)\n".utf8)
                _ = text.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            })
        do {
            try updater.run()
        } catch {
            print("driverd-update: \(error)")
            throw ExitCode(1)
        }
    }
}
