import ArgumentParser
import DriverAPI

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "The daemon's effective configuration.", subcommands: [Show.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every key's value and where it came from: default, file, remote vN (the fleet's document) or flag.")

        @OptionGroup var options: GlobalOptions

        func run() throws {
            let result = try Session(options).call(Methods.configShow, NoParams())
            try Output(options).emit(result) { ConfigFormatter.text(result) }
        }
    }
}

enum ConfigFormatter {
    static func text(_ result: ConfigShowResult) -> String {
        let remote = result.remote
        let header: String
        switch (remote.enabled, remote.running) {
        case (false, _): header = "remote configuration: off (no remote.public_key)"
        case (true, nil): header = "remote configuration: none received; the file and defaults apply"
        case (true, let version?): header = "remote configuration: v\(version)" + (remote.onTrial ? " on trial (a restart loop rolls it back)" : "")
        }
        let width = (result.entries.map(\.key.count).max() ?? 0) + 2
        let valueWidth = min(48, (result.entries.map(\.value.count).max() ?? 0) + 2)
        let rows = result.entries.map { $0.key.rightPadded(width) + $0.value.rightPadded(valueWidth) + $0.source }
        return ([header, ""] + rows).joined(separator: "\n")
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let configCommands: [any ParsableCommand.Type] = [ConfigCommand.self]
}
