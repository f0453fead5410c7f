import BackendContract
import DriverKiosk
import Foundation
import FuzzTargets
import GPSKit
import OBDKit
import Testing

/// `make test`'s share of the fuzzing: every input of the corpus in the repository (seeds from real gpsd output, real
/// adapter replies, the API's golden files, dispatch-sim's answers, and each crash a fuzzer found) through its target.
/// A crash here is a parser that traps on an input it once survived, or never did. `make fuzz` searches for new ones.
@Suite("Fuzzing corpus replayed")
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus")

    static func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map { name in
            (name, Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
    }

    @Test("every target has a corpus, and every input of it runs through its target", arguments: FuzzTargets.all.map(\.name))
    func replay(target: String) throws {
        let run = try #require(FuzzTargets.named(target)).run
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 2, "\(target): \(inputs.count) inputs")
        for input in inputs { run(input.bytes) }
    }

    /// The seeds reach past the first parse, so the fuzzer starts deep in each parser (a corpus that rotted into
    /// inputs every parser refuses at once would make the fuzzing and this replay worthless).
    @Test("the seeds reach the parsers' depths")
    func seedsReachDeep() throws {
        #expect(try Self.inputs("gpsd-json").contains { GPSDJSON.fix($0.bytes) != nil })
        #expect(try Self.inputs("elm327-reply").contains { input in
            let text = String(decoding: input.bytes, as: UTF8.self)
            let command = String(text.prefix { $0 != "\n" })
            if case .frames = ELMReply.parse(String(text.dropFirst(command.count)), command: command) { return true }
            return false
        })
        let manifests = try Self.inputs("release-manifest").compactMap { try? JSONDecoder().decode(ReleaseManifest.self, from: Data($0.bytes)) }
        #expect(manifests.contains { ReleaseRules.problem(of: $0) == nil })
        #expect(manifests.filter { ReleaseRules.problem(of: $0) != nil }.count >= 4)
        #expect(try Self.inputs("backend-push").contains { input in
            if case .push(let push)? = try? JSONDecoder().decode(WSServerMessage.self, from: Data(input.bytes)) { return push.task != nil }
            return false
        })
        #expect(try Self.inputs("kiosk-bridge").contains { if case .forward = BridgePolicy().decide($0.bytes) { true } else { false } })
    }
}
