import DriverAPI
import Foundation
import Testing

@Suite("TextFormat", .serialized)
struct TextFormatTests {
    /// Runs `body` with the process's TZ set to `zone`, then puts it back.
    private func withTimeZone<T>(_ zone: String, _ body: () throws -> T) rethrows -> T {
        let previous = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return try body()
    }

    @Test("times print in UTC whatever the unit's time zone (+12:45, −09:30, a zone with DST), from libc, not Foundation's TimeZone")
    func utcWhateverTheZone() {
        // 2026-03-29T01:30:00Z: the hour Europe/Berlin springs forward.
        for zone in ["Pacific/Chatham", "Pacific/Marquesas", "Europe/Berlin", "UTC", "Nowhere/Invalid"] {
            withTimeZone(zone) {
                #expect(TextFormat.UTC(1_774_747_800).iso8601 == "2026-03-29T01:30:00Z", "TZ=\(zone)")
                #expect(TextFormat.UTC(0).iso8601 == "1970-01-01T00:00:00Z", "TZ=\(zone)")
                #expect(TextFormat.UTC(951_825_599.9).iso8601 == "2000-02-29T11:59:59Z", "TZ=\(zone)")
            }
        }
    }

    @Test("bytes in hex: two lower-case digits each")
    func hex() {
        #expect(TextFormat.hex([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(TextFormat.hex([UInt8]()) == "")
    }
}
