#if canImport(Glibc)
import Glibc
#endif

/// Plain-text spellings shared by the daemon, its front ends and tools (no Foundation), so a rate or a time
/// reads the same in `systemctl status`, in `driverctl` and in synthesised NMEA.
public enum TextFormat {
    /// `value` with exactly `decimals` digits after the point, rounded half away from zero.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        var fraction = String(scaled % scale)
        fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
        return (value < 0 && scaled != 0 ? "-" : "") + "\(scaled / scale)" + (decimals > 0 ? "." + fraction : "")
    }

    /// Bytes in lower-case hex, two digits each (digests, tokens).
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A sampling rate: `1 Hz`, `0.2 Hz`, `0.1 Hz`, and below that a whole period as `1/60 Hz`.
    public static func rate(_ hz: Double) -> String {
        if hz >= 1 || hz == 0 { return fixed(hz, decimals: hz == hz.rounded() ? 0 : 1) + " Hz" }
        let period = (1 / hz).rounded()
        if hz < 0.1, abs(1 / period - hz) < 1e-6 { return "1/\(Int(period)) Hz" }
        var text = fixed(hz, decimals: 3)
        while text.hasSuffix("0") { text.removeLast() }
        return text + " Hz"
    }

    /// The UTC calendar fields of `time` (seconds since 1970).
    public struct UTC: Sendable, Equatable {
        public var year, month, day, hour, minute, second: Int

        public init(_ time: Double) {
            var seconds = time_t(time.rounded(.down))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            (year, month, day) = (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
            (hour, minute, second) = (Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        }

        /// `2026-11-28T08:00:00Z`
        public var iso8601: String {
            "\(year)-\(TextFormat.two(month))-\(TextFormat.two(day))T\(TextFormat.two(hour)):\(TextFormat.two(minute)):\(TextFormat.two(second))Z"
        }
    }

    /// How far one clock is from another: `26.9 years behind`, `3.2 s ahead` (negative is behind).
    public static func clockOffset(_ seconds: Double) -> String {
        let size = abs(seconds), side = seconds < 0 ? "behind" : "ahead"
        let amount = switch size {
        case ..<120: fixed(size, decimals: 1) + " s"
        case ..<(2 * 86400): fixed(size / 3600, decimals: 1) + " h"
        case ..<(365 * 86400): fixed(size / 86400, decimals: 1) + " days"
        default: fixed(size / (365.25 * 86400), decimals: 1) + " years"
        }
        return "\(amount) \(side)"
    }

    /// Two digits, zero-padded.
    public static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
