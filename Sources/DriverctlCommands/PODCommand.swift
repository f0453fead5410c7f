import ArgumentParser
import DriverAPI
import FoundationEssentials

struct POD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pod", abstract: "Capture the proof of delivery.", subcommands: [OTP.self, Photo.self])

    struct OTP: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The customer's 4-digit code: checked at once online, queued as unverified offline.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var target: TaskOption
        @Argument(help: "The code.") var code: String

        func run() throws {
            let result = try Session(options, timeout: .seconds(30)).call(Methods.podOTP, OTPParams(taskId: target.task, otp: code))
            try Output(options).emit(result) { RouteFormatter.proof(result) }
        }
    }

    struct Photo: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A JPEG or PNG photo of the handover; the daemon keeps a copy and uploads it.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var target: TaskOption
        @Argument(help: "The photo file.") var file: String

        func run() throws {
            let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            let result = try Session(options).call(Methods.podPhoto, PhotoParams(taskId: target.task, path: path))
            try Output(options).emit(result) { RouteFormatter.proof(result) }
        }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let podCommands: [any ParsableCommand.Type] = [POD.self]
}
