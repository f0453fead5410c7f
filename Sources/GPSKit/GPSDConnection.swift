#if canImport(Glibc)
import Glibc
#endif
import CGPS
import DriverAPI
import DriverDomain

/// One libgps session. Not thread-safe: the reader's thread alone uses it.
final class GPSDConnection {
    /// How much gpsd should send.
    enum Watch {
        /// Every report as JSON.
        case streaming
        /// Stop watching: gpsd may close the device and power the receiver down.
        case released
    }

    /// One parsed report.
    enum Report {
        case fix(Fix)
        case noFix
        case other
    }

    private var data = gps_data_t()
    private var isOpen = false
    private var satellitesUsed: Int?

    func open(_ endpoint: GPSDEndpoint) throws(GPSDError) {
        let result = gps_open(endpoint.host, endpoint.port, &data)
        guard result == 0 else {
            throw GPSDError(operation: "gps_open \(endpoint)", code: result, detail: String(cString: gps_errstr(result)))
        }
        isOpen = true
        // Between slow samples gpsd's reports wait in the socket (a 10 Hz receiver sends about 5 KB a second):
        // room for well over the longest streaming pause (the kernel caps it at net.core.rmem_max).
        var size: Int32 = 1 << 20
        _ = setsockopt(cgps_fd(&data), SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    var descriptor: Int32 { isOpen ? cgps_fd(&data) : -1 }

    func set(_ watch: Watch) throws(GPSDError) {
        let command = switch watch {
        case .streaming: #"?WATCH={"enable":true,"json":true};"#
        case .released: #"?WATCH={"enable":false};"#
        }
        let result = cgps_send(&data, command)
        guard result == 0 else { throw GPSDError(operation: "gps_send", code: result, detail: "gpsd went away") }
    }

    /// Whether a report is buffered or arrives within `microseconds` (0: do not wait).
    func waiting(microseconds: Int32) -> Bool { gps_waiting(&data, microseconds) }

    /// Reads and parses one report.
    func read() throws(GPSDError) -> Report {
        let result = gps_read(&data, nil, 0)
        guard result >= 0 else { throw GPSDError(operation: "gps_read", code: result, detail: "gpsd closed the connection") }
        return Self.report(of: data, satellitesUsed: &satellitesUsed)
    }

    /// One line of gpsd's JSON, as libgps reads it and this reader takes it: what the fuzzer feeds (gpsd's output is
    /// outside input, and a gpsd fed by a faulty receiver, or another program on port 2947, may send anything).
    static func decode(json line: [UInt8]) -> Report {
        var data = gps_data_t()
        var satellitesUsed: Int?
        var text = line.filter { $0 != 0 }.map { CChar(bitPattern: $0) } + [0]
        _ = gps_unpack(&text, &data)
        return report(of: data, satellitesUsed: &satellitesUsed)
    }

    private static func report(of data: gps_data_t, satellitesUsed: inout Int?) -> Report {
        if data.set & UInt64(SATELLITE_SET) != 0, data.satellites_used >= 0 {
            satellitesUsed = Int(data.satellites_used)
        }
        guard data.set & UInt64(MODE_SET) != 0 else { return .other }
        let fix = data.fix
        guard fix.mode >= MODE_2D else { return .noFix }
        // A TPV without time (a client joining mid-epoch) or without a position cannot be used.
        guard data.set & UInt64(TIME_SET) != 0, data.set & UInt64(LATLON_SET) != 0,
              fix.latitude.isFinite, fix.longitude.isFinite
        else { return .other }
        let time = Double(fix.time.tv_sec) + Double(fix.time.tv_nsec) / 1e9
        return .fix(Fix(
            time: time, latitude: fix.latitude, longitude: fix.longitude,
            altitude: finite(fix.altHAE), speed: finite(fix.speed), track: finite(fix.track),
            climb: finite(fix.climb), horizontalError: finite(fix.eph), verticalError: finite(fix.epv),
            mode: Int(fix.mode), satellitesUsed: satellitesUsed))
    }

    func close() {
        guard isOpen else { return }
        gps_close(&data)
        isOpen = false
        satellitesUsed = nil
    }

    deinit { close() }

    private static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}

/// gpsd's JSON as this reader takes it, one line at a time: the fuzzer's way in (and its corpus replay's).
public enum GPSDJSON {
    /// The fix a line gives, or nil (another report, no fix, no time or position).
    public static func fix(_ line: [UInt8]) -> Fix? {
        if case .fix(let fix) = GPSDConnection.decode(json: line) { return fix }
        return nil
    }
}
