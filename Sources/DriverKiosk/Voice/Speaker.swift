import Foundation
import Logging

/// Speaks prompts one after the other through espeak-ng on the default audio device: never two at once, at
/// most a few waiting (older ones that repeat a waiting text are dropped). In test mode each prompt is
/// rendered to a WAV file, with its text in `prompts.log`, instead.
public actor Speaker {
    let configuration: KioskConfiguration
    let logger: Logger
    private var queue: [String] = []
    private var speaking = false
    private var rendered = 0
    static let maxWaiting = 4
    public static let espeak = "/usr/bin/espeak-ng"

    public init(configuration: KioskConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    public func say(_ text: String) {
        guard configuration.voiceEnabled, !text.isEmpty, !queue.contains(text) else { return }
        queue.append(text)
        if queue.count > Self.maxWaiting { queue.removeFirst(queue.count - Self.maxWaiting) }
        guard !speaking else { return }
        speaking = true
        Task { await drain() }
    }

    private func drain() async {
        while !queue.isEmpty {
            let text = queue.removeFirst()
            await speak(text)
        }
        speaking = false
    }

    private func speak(_ text: String) async {
        // espeak-ng's amplitude runs 0…200, 100 being its normal loudness.
        var arguments = ["-v", configuration.voiceName, "-s", String(configuration.voiceRate), "-a", String(configuration.voiceVolume * 2)]
        var wav: String?
        if let directory = configuration.voiceWavDirectory {
            rendered += 1
            let path = "\(directory)/prompt-\(String(format: "%03d", rendered)).wav"
            arguments += ["-w", path]
            wav = path
        }
        arguments += ["--", text]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.espeak)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let status: Int32 = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                logger.warning("cannot run espeak-ng: \(error)")
                process.terminationHandler = nil
                continuation.resume(returning: -1)
            }
        }
        if status != 0 { logger.warning("espeak-ng ended with status \(status)") }
        if let wav, let directory = configuration.voiceWavDirectory {
            let line = "\(URL(fileURLWithPath: wav).lastPathComponent)\t\(text)\n"
            if let handle = FileHandle(forWritingAtPath: "\(directory)/prompts.log") {
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                try? handle.close()
            } else {
                FileManager.default.createFile(atPath: "\(directory)/prompts.log", contents: Data(line.utf8))
            }
        }
    }
}
