import DriverAPI
import DriverDomain
import Foundation

/// Reads RMC sentences of a receiver log into fixes, to compute what the sampling policy should record.
enum NMEALog {
    static func fixes(_ path: String) throws -> [Fix] {
        let text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        var fixes: [Fix] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            guard let dollar = rawLine.firstIndex(of: "$") else { continue }
            let body = rawLine[rawLine.index(after: dollar)...].split(separator: "*", maxSplits: 1).first ?? ""
            let fields = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count > 9, fields[0].hasSuffix("RMC"), fields[2] == "A",
                  let lat = coordinate(fields[3], fields[4], degreeDigits: 2),
                  let lon = coordinate(fields[5], fields[6], degreeDigits: 3),
                  let time = timestamp(clock: fields[1], date: fields[9])
            else { continue }
            fixes.append(Fix(
                time: time, latitude: lat, longitude: lon, speed: Double(fields[7]).map { $0 * 1852 / 3600 },
                track: Double(fields[8])))
        }
        return fixes
    }

    /// Pings per motion mode the policy records for these fixes, as the daemon would.
    static func expectedPings(_ fixes: [Fix]) -> [String: Int] {
        var filter = FixFilter()
        var detector = MotionDetector()
        var policy = SamplingPolicy()
        var counts: [String: Int] = [:]
        for fix in fixes {
            switch filter.evaluate(fix) {
            case .accept, .reanchor: break
            case .duplicate, .reject: continue
            }
            if case .changed(let motion) = detector.observe(fix) { policy.motionChanged(to: motion) }
            if case .record = policy.decide(fix) { counts[detector.motion.rawValue, default: 0] += 1 }
        }
        return counts
    }

    private static func coordinate(_ value: String, _ hemisphere: String, degreeDigits: Int) -> Double? {
        guard value.count > degreeDigits, let degrees = Double(value.prefix(degreeDigits)),
              let minutes = Double(value.dropFirst(degreeDigits))
        else { return nil }
        let sign: Double = hemisphere == "S" || hemisphere == "W" ? -1 : 1
        return sign * (degrees + minutes / 60)
    }

    private static func timestamp(clock: String, date: String) -> Double? {
        guard clock.count >= 6, date.count == 6,
              let hh = Int(clock.prefix(2)), let mm = Int(clock.dropFirst(2).prefix(2)), let ss = Double(clock.dropFirst(4)),
              let day = Int(date.prefix(2)), let month = Int(date.dropFirst(2).prefix(2)), let year = Int(date.suffix(2))
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32((year < 80 ? 2000 : 1900) + year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hh)
        parts.tm_min = Int32(mm)
        return Double(timegm(&parts)) + ss
    }
}
