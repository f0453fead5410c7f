import DriverDomain

/// The backend's "not now" (RFC 9110 §10.2.3, RFC 6585 §4): a 429 or 503 may carry `Retry-After`, either
/// delay-seconds or an HTTP-date. A date is read against the same response's `Date` header, never the unit's
/// clock (a unit's clock may be hours off before GPS time arrives; the difference of the backend's two stamps
/// is right whatever the unit's clock says).
///
/// The wait is what the backend said; how much of it a unit takes (at most an hour) is the uplink's policy
/// (`UplinkStateMachine.longestRetryAfter`).
public enum RetryAfter {
    /// The wait in seconds (0 or more), or nil when the header says nothing usable (absent, malformed, or a date
    /// without a `Date` to read it against).
    public static func seconds(_ value: String?, responseDate: String?) -> Double? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return Double(value) }
        guard let at = httpDate(value), let now = responseDate.flatMap(httpDate) else { return nil }
        return max(at - now, 0)
    }

    /// An HTTP-date as Unix seconds, in any of the three forms a recipient must accept (RFC 9110 §5.6.7):
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`.
    public static func httpDate(_ text: String) -> Double? {
        // In all three, the first plain number is the day and the second the year; the month is a name.
        var numbers: [Int] = [], month: Int?, clock: [Int]?
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }) {
            if token.firstIndex(of: ":") != nil {
                let parts = token.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 3 else { return nil }
                clock = parts
            } else if let number = Int(token) {
                numbers.append(number)
            } else if token.count == 3, let index = months.firstIndex(where: { $0.lowercased() == token.lowercased() }) {
                month = index + 1
            }
        }
        guard numbers.count == 2, let month, let clock else { return nil }
        let day = numbers[0]
        // Two-digit years (RFC 850): within 50 years of now, as RFC 9110 asks; this reads 70–99 as 19xx.
        let year = numbers[1] < 100 ? (numbers[1] < 70 ? 2000 + numbers[1] : 1900 + numbers[1]) : numbers[1]
        guard (1...31).contains(day), (1970...9999).contains(year), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
              (0...60).contains(clock[2])
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2])
    }

    /// `unixSeconds` as an IMF-fixdate (what a server writes in `Date` and `Retry-After`).
    public static func imfFixdate(_ unixSeconds: Int) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let seconds = unixSeconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)) GMT"
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
