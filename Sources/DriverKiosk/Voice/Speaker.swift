import FoundationEssentials
import Logging
import NIOPosix
import Spawn
#if canImport(Glibc)
import Glibc
#endif

/// Speaks prompts one after the other through espeak-ng on the default audio device: never two at once, at
/// most a few waiting (older ones that repeat a waiting text are dropped). In test mode each prompt is
/// rendered to a WAV file, with its text in `prompts.log`, instead.
public actor Speaker {
    let configuration: KioskConfiguration
    let logger: Logger
    /// What waits to be said, each with the espeak-ng voice that says it.
    private var queue: [(text: String, voice: String)] = []
    private var speaking = false
    private var rendered = 0
    static let maxWaiting = 4
    public static let espeak = "/usr/bin/espeak-ng"

    public init(configuration: KioskConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    public func say(_ text: String, voice: String) {
        guard configuration.voiceEnabled, !text.isEmpty, !queue.contains(where: { $0.text == text }) else { return }
        queue.append((text, voice))
        if queue.count > Self.maxWaiting { queue.removeFirst(queue.count - Self.maxWaiting) }
        guard !speaking else { return }
        speaking = true
        Task { await drain() }
    }

    private func drain() async {
        while !queue.isEmpty {
            let (text, voice) = queue.removeFirst()
            await speak(text, voice: voice)
        }
        speaking = false
    }

    private func speak(_ text: String, voice: String) async {
        // espeak-ng's amplitude runs 0…200, 100 being its normal loudness.
        var arguments = ["-v", voice, "-s", String(configuration.voiceRate), "-a", String(configuration.voiceVolume * 2)]
        var wav: String?
        if let directory = configuration.voiceWavDirectory {
            rendered += 1
            let number = String(rendered)
            let path = "\(directory)/prompt-\(String(repeating: "0", count: max(0, 3 - number.count)) + number).wav"
            arguments += ["-w", path]
            wav = path
        }
        arguments += ["--", text]
        // espeak-ng runs to its end (seconds of speech) on NIO's blocking pool, never on the actor's executor.
        do {
            let ran = try await NIOThreadPool.singleton.runIfActive { [arguments] in try ChildProcess.run(Self.espeak, arguments) }
            if ran.status != 0 { logger.warning("espeak-ng ended with status \(ran.status): \(ran.output.split(separator: "\n").first ?? "")") }
        } catch {
            logger.warning("cannot run espeak-ng: \(error)")
        }
        if let wav, let directory = configuration.voiceWavDirectory {
            let name = wav.split(separator: "/").last.map(String.init) ?? wav
            Self.append("\(name)\t\(voice)\t\(text)\n", to: "\(directory)/prompts.log")
        }
    }

    /// Appends a line to the test mode's log of prompts.
    private static func append(_ line: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = Array(line.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
