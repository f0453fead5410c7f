#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DriverAPI
import JSONRPC

/// One connection to the daemon for one subcommand. Failures become one line on stderr and exit code 1.
struct Session {
    let client: RPCClient

    init(_ options: GlobalOptions, timeout: Duration? = .seconds(10)) throws {
        do {
            client = try RPCClient(socketPath: options.socketPath, timeout: timeout)
        } catch {
            throw Self.fail(error)
        }
    }

    /// Calls `method` in the same round trip as `agent.describe`, and warns when the API major versions differ.
    func call<P, R>(_ method: Method<P, R>, _ params: P) throws -> R {
        do {
            let (description, result) = try client.call(Methods.agentDescribe, NoParams(), method, params)
            if description.apiMajor != APIVersion.major {
                Environment.printError(
                    "driverctl: warning: driverd speaks API \(description.apiMajor).\(description.apiMinor), "
                        + "this driverctl \(APIVersion.major).\(APIVersion.minor); results may be incomplete")
            }
            return result
        } catch {
            throw Self.fail(error)
        }
    }

    func callUnchecked<P, R>(_ method: Method<P, R>, _ params: P) throws -> R {
        do {
            return try client.call(method, params)
        } catch {
            throw Self.fail(error)
        }
    }

    /// Reads notifications until the daemon closes the connection.
    func follow(_ handle: (String, JSONValue?) -> Void) throws {
        do {
            while true {
                let message = try client.readReply()
                if case .string(let method) = message["method"] { handle(method, message["params"]) }
            }
        } catch {
            throw Self.fail(error)
        }
    }

    private static func fail(_ error: RPCClient.Failure) -> ExitCode {
        Environment.printError("driverctl: \(error)")
        return ExitCode(1)
    }
}

enum Environment {
    static func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// A line on standard output, unbuffered.
    static func printLine(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    }

    static func printError(_ message: String) { printErrorInline(message + "\n") }

    /// Text on standard error without a newline (prompts).
    static func printErrorInline(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
