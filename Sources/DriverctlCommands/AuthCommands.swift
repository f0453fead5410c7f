#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DriverAPI

// `auth.*`: the driver's login on this unit.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log the driver in to the backend.",
        discussion: "The password is read without echo from the terminal, or as the first line of standard input.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The driver's username (asked for when left out).")
    var username: String?

    func run() throws {
        guard let username = username ?? Prompt.line("username: ", echo: true), !username.isEmpty else {
            throw ValidationError("a username is required")
        }
        guard let password = Prompt.line("password: ", echo: false), !password.isEmpty else {
            throw ValidationError("a password is required")
        }
        let result = try Session(options, timeout: .seconds(60)).call(Methods.authLogin, LoginParams(username: username, password: password))
        try Output(options).emit(result) { "logged in as \(result.driverId); token valid until \(TextFormat.UTC(result.expiresAt).iso8601)" }
    }
}

/// Reads a line from the terminal (echo off for secrets) or from standard input when it is not a terminal.
enum Prompt {
    static func line(_ prompt: String, echo: Bool) -> String? {
        let interactive = isatty(STDIN_FILENO) == 1
        var saved = termios()
        if interactive {
            Environment.printErrorInline(prompt)
            if !echo, tcgetattr(STDIN_FILENO, &saved) == 0 {
                var quiet = saved
                quiet.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
            }
        }
        defer {
            if interactive && !echo {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                Environment.printErrorInline("\n")
            }
        }
        return readLine(strippingNewline: true)
    }
}

struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log out: clears the route, names, phones and uploaded photos; keeps unsent changes for your next login.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let result = try Session(options).call(Methods.authLogout, NoParams())
        try Output(options).emit(result) {
            "logged out: \(StatusFormatter.plural(result.removedTasks, "task")) and \(StatusFormatter.plural(result.removedPhotos, "photo")) removed; "
                + "\(StatusFormatter.plural(result.keptItems, "unsent change")) kept for your next login"
        }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let authCommands: [any ParsableCommand.Type] = [Login.self, Logout.self]
}
