#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain

/// Formats fixes as NMEA 0183 RMC, GGA and VTG sentences with correct checksums.
public enum NMEAWriter {
    /// The sentences of one epoch. `fix` nil means no fix at `time` (status V, quality 0).
    public static func epoch(_ fix: Fix?, time: Double, hdop: Double = 0.9) -> [String] {
        let (clock, date) = utc(time)
        guard let fix else {
            return [
                sentence("GPRMC,\(clock),V,,,,,,,\(date),,,N"),
                sentence("GPGGA,\(clock),,,,,0,00,99.9,,M,,M,,"),
                sentence("GPVTG,,T,,M,,N,,K,N"),
            ]
        }
        let lat = coordinate(fix.latitude, degreeDigits: 2, positive: "N", negative: "S")
        let lon = coordinate(fix.longitude, degreeDigits: 3, positive: "E", negative: "W")
        let knots = TextFormat.fixed((fix.speed ?? 0) * 3600 / 1852, decimals: 2)
        let kmh = TextFormat.fixed((fix.speed ?? 0) * 3.6, decimals: 2)
        let track = fix.track.map { TextFormat.fixed($0, decimals: 1) } ?? ""
        let altitude = TextFormat.fixed(fix.altitude ?? 0, decimals: 1)
        let satellites = TextFormat.two(fix.satellitesUsed ?? 8)
        return [
            sentence("GPRMC,\(clock),A,\(lat),\(lon),\(knots),\(track),\(date),,,A"),
            sentence("GPGGA,\(clock),\(lat),\(lon),1,\(satellites),\(TextFormat.fixed(hdop, decimals: 1)),\(altitude),M,47.0,M,,"),
            sentence("GPVTG,\(track),T,,M,\(knots),N,\(kmh),K,A"),
        ]
    }

    /// The whole log of a route, CRLF-terminated as receivers write it. A stale epoch repeats the earlier
    /// fix's sentences, its old time included.
    public static func log(_ route: SyntheticRoute) -> String {
        var output = ""
        for epoch in route.epochs() {
            let time = epoch.fix?.time ?? route.startTime + epoch.elapsed + route.clockOffset
            for line in self.epoch(epoch.fix, time: time, hdop: route.hdop) { output += line + "\r\n" }
        }
        return output
    }

    /// `$BODY*CS` with the XOR checksum of BODY.
    public static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        let hex = Array("0123456789ABCDEF")
        return "$\(body)*\(hex[Int(checksum >> 4)])\(hex[Int(checksum & 0x0F)])"
    }

    static func coordinate(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> String {
        let absolute = abs(value)
        var degrees = Int(absolute)
        var minutes = (absolute - Double(degrees)) * 60
        if (minutes * 10000).rounded() >= 600_000 {
            degrees += 1
            minutes = 0
        }
        let degreeText = String(repeating: "0", count: max(0, degreeDigits - String(degrees).count)) + String(degrees)
        var minuteText = TextFormat.fixed(minutes, decimals: 4)
        if minutes < 10 { minuteText = "0" + minuteText }
        return "\(degreeText)\(minuteText),\(value < 0 ? negative : positive)"
    }

    /// `hhmmss.cc` (hundredths, for receivers faster than 1 Hz) and `ddmmyy`.
    static func utc(_ time: Double) -> (clock: String, date: String) {
        let hundredths = Int((time * 100).rounded())
        let whole = Double(hundredths / 100)
        let utc = TextFormat.UTC(whole)
        let two = TextFormat.two
        return (two(utc.hour) + two(utc.minute) + two(utc.second) + "." + two(hundredths % 100), two(utc.day) + two(utc.month) + two(utc.year % 100))
    }
}
