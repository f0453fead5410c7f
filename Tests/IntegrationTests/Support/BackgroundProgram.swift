import Foundation

/// A program left running while the test goes on (a front end watching the daemon), its output in a file.
final class BackgroundProgram {
    let process = Process()
    let outputPath: String

    init(_ path: String, _ arguments: [String], environment: [String: String] = [:], directory: TemporaryDirectory, name: String) throws {
        outputPath = directory.file(name)
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle.nullDevice
        let process = self.process
        try LongLivedSpawner.run { try process.run() }
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits for it to end by itself (bounded), stops it otherwise; its whole output.
    func finish(within timeout: Duration = .seconds(10)) -> String {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return output
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
