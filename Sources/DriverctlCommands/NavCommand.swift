#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DriverAPI

struct Navigate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Hand the next stop (or --stop) to a navigation app.")
    @OptionGroup var options: GlobalOptions

    enum App: String, ExpressibleByArgument, CaseIterable {
        case google, apple, waze, geo, web
    }

    @Option(name: .long, help: "google, apple, waze, geo or web (Google Maps in a browser).")
    var app: App = .geo

    @Option(name: .long, help: "A stop id (default: the next stop).")
    var stop: String?

    @Flag(name: .long, help: "Open the link with xdg-open.")
    var open = false

    func run() throws {
        let result = try Session(options).call(Methods.navLinks, NavParams(stopId: stop))
        let link = switch app {
        case .google: result.links.google
        case .apple: result.links.apple
        case .waze: result.links.waze
        case .geo: result.links.geo
        case .web: result.links.googleWeb
        }
        try Output(options).emit(result) { link }
        if open { try Self.xdgOpen(link) }
    }

    static func xdgOpen(_ link: String) throws {
        var pid = pid_t()
        let arguments = ["xdg-open", link]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, "xdg-open", nil, nil, &argv, environ) == 0 else {
            throw ValidationError("cannot run xdg-open (is xdg-utils installed?)")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else { throw ValidationError("xdg-open could not open \(link)") }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let navCommands: [any ParsableCommand.Type] = [Navigate.self]
}
