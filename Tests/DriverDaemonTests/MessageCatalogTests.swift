import DriverDaemon
import Foundation
import Testing

/// packaging/driverd.catalog is what `journalctl -x` shows under the daemon's entries: every MESSAGE_ID the
/// daemon logs must have an entry that says what happened and what to do.
@Suite("journald message catalog")
struct MessageCatalogTests {
    static func entries() throws -> [String: String] {
        let path = #filePath.replacingOccurrences(of: "Tests/DriverDaemonTests/MessageCatalogTests.swift", with: "packaging/driverd.catalog")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var entries: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("-- ") {
                current = String(line.dropFirst(3))
                #expect(entries[current!] == nil, "\(current!) appears twice")
                entries[current!] = ""
            } else if let id = current {
                entries[id]! += line + "\n"
            }
        }
        return entries
    }

    @Test("every MessageID has one entry with a subject, a definer and a text; there are no others")
    func everyIDExplained() throws {
        let entries = try Self.entries()
        #expect(Set(entries.keys) == Set(MessageID.allCases.map(\.rawValue)))
        for id in MessageID.allCases {
            let body = try #require(entries[id.rawValue])
            #expect(body.contains("\nSubject: ") || body.hasPrefix("Subject: "), "\(id) has no Subject")
            #expect(body.contains("Defined-By: driverd"), "\(id)")
            // Headers, a blank line, then at least one line of explanation.
            let parts = body.components(separatedBy: "\n\n")
            #expect(parts.count >= 2 && parts[1].split(separator: "\n").count >= 1, "\(id) has no text")
        }
    }

    @Test("ids are 128-bit lower-case hex, as journald requires")
    func idFormat() {
        for id in MessageID.allCases {
            #expect(id.rawValue.count == 32 && id.rawValue.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(id)")
        }
    }
}
