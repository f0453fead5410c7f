import BackendContract
import Testing

@Suite("Retry-After")
struct RetryAfterTests {
    static let date = "Fri, 27 Nov 2026 22:10:00 GMT"

    @Test("delay-seconds as they are; an HTTP-date against the answer's own Date, in all three forms; nothing usable is nil")
    func seconds() {
        #expect(RetryAfter.seconds("120", responseDate: nil) == 120)
        #expect(RetryAfter.seconds(" 0 ", responseDate: nil) == 0)
        #expect(RetryAfter.seconds("99999999999999999999999", responseDate: nil)! > 1e22)
        #expect(RetryAfter.seconds("Fri, 27 Nov 2026 22:11:30 GMT", responseDate: Self.date) == 90)
        #expect(RetryAfter.seconds("Friday, 27-Nov-26 22:11:30 GMT", responseDate: Self.date) == 90)
        #expect(RetryAfter.seconds("Fri Nov 27 22:11:30 2026", responseDate: Self.date) == 90)
        // A date already past is "now"; a date without a Date to read it against says nothing (the unit's clock,
        // hours off before GPS time, is never asked).
        #expect(RetryAfter.seconds("Fri, 27 Nov 2026 22:00:00 GMT", responseDate: Self.date) == 0)
        #expect(RetryAfter.seconds("Fri, 27 Nov 2026 22:11:30 GMT", responseDate: nil) == nil)
        for garbage in [nil, "", "-5", "1.5", "soon", "Fri, 32 Nov 2026 22:11:30 GMT", "Fri, 27 Nov 2026 25:11:30 GMT", "27 Nov 2026"] {
            #expect(RetryAfter.seconds(garbage, responseDate: Self.date) == nil, "\(String(describing: garbage))")
        }
    }

    @Test("HTTP-dates: the RFC's example, the epoch, a leap day, and the server's own form read back")
    func dates() {
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(RetryAfter.httpDate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.httpDate("Thu, 29 Feb 2024 12:00:00 GMT") == 1_709_208_000)
        for seconds in [0, 784_111_777, 1_709_208_000, 1_795_817_400, 4_102_444_799] {
            #expect(RetryAfter.httpDate(RetryAfter.imfFixdate(seconds)) == Double(seconds), "\(RetryAfter.imfFixdate(seconds))")
        }
        #expect(RetryAfter.imfFixdate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(RetryAfter.imfFixdate(1_795_817_400) == Self.date)
    }
}
