import Foundation
import Testing

/// docs/ARCHITECTURE.md: one JSON encoder and one decoder, `Codec`'s. The unit's programs make no Foundation coder of
/// their own; the reference backend and the tools beside it (dispatch-sim, the bench, nmea-synth) are not the unit's
/// code and may.
@Suite("Codec drift")
struct CodecDriftTests {
    static let notTheUnits: Set<String> = ["DispatchSim", "DispatchSimCore", "dispatch-sim", "driverd-bench", "nmea-synth"]

    @Test("no JSONEncoder() or JSONDecoder() in the unit's code outside Codec")
    func oneCodec() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        var checked = 0, found: [String] = []
        for file in files where !Self.notTheUnits.contains(String(file.prefix { $0 != "/" })) && file != "DriverAPI/Codec.swift" {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            checked += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("JSONEncoder(") || line.contains("JSONDecoder(") {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(checked > 200, "the unit's sources were found (\(checked) files)")
        #expect(found.isEmpty, "Foundation's coders made outside Codec:\n\(found.joined(separator: "\n"))")
    }
}
