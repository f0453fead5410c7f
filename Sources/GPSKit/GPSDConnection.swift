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
    private var lines = LineBuffer()

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

    /// Whether a whole report is buffered or arrives within `microseconds` (0: do not wait), or gpsd went away (the
    /// next `read` says so).
    func waiting(microseconds: Int32) -> Bool {
        if lines.hasLine || lines.closed { return true }
        var descriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, (microseconds + 999) / 1000) > 0 else { return false }
        lines.fill(from: self.descriptor)
        return lines.hasLine || lines.closed
    }

    /// Reads and parses one report (one line: the reader's own, not libgps's `gps_read`, so that a line which is not
    /// JSON never reaches libgps's parser: libgps 3.22 loops forever on `{"class":"TPV","lon":"class":"TPV"}`, found
    /// by the fuzzer).
    func read() throws(GPSDError) -> Report {
        if !lines.hasLine, !lines.closed { lines.fill(from: descriptor) }
        guard let line = lines.next() else {
            if lines.closed { throw GPSDError(operation: "read", code: -1, detail: "gpsd closed the connection") }
            return .other
        }
        return Self.decode(json: line, satellitesUsed: &satellitesUsed)
    }

    /// One line of gpsd's JSON as this reader takes it: checked as JSON by the strict parser, then unpacked by libgps
    /// (`gps_unpack`, as `gps_read` would). What the fuzzer feeds: gpsd's output is outside input (a gpsd fed by a
    /// faulty receiver, or another program on port 2947, may send anything).
    static func decode(json line: [UInt8], satellitesUsed: inout Int?) -> Report {
        // Not JSON, or not a report of the shape this reader uses: dropped, never unpacked. (`try?`: a line that does
        // not parse is an expected answer here, not gpsd's report; nothing is persisted or sent from it.)
        guard line.count <= LineBuffer.maxLine, let value = try? JSONParser.parse(line), isAdmissible(value) else { return .other }
        let written = keys(line)
        guard !hasRepeatedKey(written), hasClassFirstAndOnce(written) else { return .other }
        var data = gps_data_t()
        var text = line.map { CChar(bitPattern: $0) } + [0]
        _ = gps_unpack(&text, &data)
        return report(of: data, satellitesUsed: &satellitesUsed)
    }

    /// gpsd writes `class` first in every report, and once. libgps 3.22 loops forever on a value of the wrong type
    /// (a string for a number, or the reverse) followed by a `class` key (`{"lon":"x","class":"TPV"}`,
    /// `{"class":"TPV","mode":"x","class":"TPV"}`, found by the fuzzer): such a line is not gpsd's.
    static func hasClassFirstAndOnce(_ keys: [Key]) -> Bool {
        let outer = keys.filter { $0.object == 0 }.map(\.name)
        return outer.first == Array("class".utf8) && outer.dropFirst().allSatisfy { $0 != Array("class".utf8) }
    }

    /// Whether an object of the line holds a key twice. gpsd writes each key once; the parsed object keeps only the
    /// last of two, so `{"class":"TPV","x":{"class":"TPV"},"x":1}` looked like a TPV of scalars to `isAdmissible`
    /// while libgps, reading the line itself, looped forever on the nested object (found by the fuzzer).
    static func hasRepeatedKey(_ keys: [Key]) -> Bool {
        var seen: Set<Key> = []
        return keys.contains { !seen.insert($0).inserted }
    }

    /// A key as written (escapes left as they are: libgps compares them so too), and which object of the line holds
    /// it (0: the outer one, then in the order they open).
    struct Key: Hashable {
        var object: Int
        var name: [UInt8]
    }

    /// Every key of every object of the line, in order. For a line the strict parser took as JSON.
    static func keys(_ line: [UInt8]) -> [Key] {
        var keys: [Key] = []
        // One entry a level: the object's number, or nil for an array.
        var levels: [Int?] = []
        var objects = 0
        var inString = false, escaped = false, expectingKey = false, readingKey = false
        var name: [UInt8] = []
        for byte in line {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if readingKey, let object = levels.last ?? nil { keys.append(Key(object: object, name: name)) }
                    readingKey = false
                    continue
                }
                if readingKey { name.append(byte) }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                readingKey = expectingKey
                expectingKey = false
                name = []
            case UInt8(ascii: "{"):
                levels.append(objects)
                objects += 1
                expectingKey = true
            case UInt8(ascii: "["):
                levels.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !levels.isEmpty { levels.removeLast() }
            case UInt8(ascii: ","):
                expectingKey = (levels.last ?? nil) != nil
            default:
                break
            }
        }
        return keys
    }

    /// The reports this reader uses, in the shape gpsd writes them: a TPV of scalars, a SKY of scalars and its list
    /// of satellites (objects of scalars). libgps 3.22 also loops forever on a nested object holding a "class" key
    /// where it expects none (`{"class":"TPV","x":[{"class":"TPV"}]}`, found by the fuzzer), so nothing nested
    /// reaches it but SKY's satellites.
    static func isAdmissible(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, case .string(let kind)? = members["class"] else { return false }
        func isScalar(_ value: JSONValue) -> Bool {
            switch value {
            case .array, .object: false
            default: true
            }
        }
        switch kind {
        case "TPV":
            return members.values.allSatisfy(isScalar)
        case "SKY":
            return members.allSatisfy { key, value in
                guard key == "satellites" else { return isScalar(value) }
                guard case .array(let satellites) = value else { return false }
                return satellites.allSatisfy { satellite in
                    guard case .object(let fields) = satellite else { return false }
                    return fields["class"] == nil && fields.values.allSatisfy(isScalar)
                }
            }
        default:
            return false
        }
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
        lines = LineBuffer()
    }

    deinit { close() }

    private static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}

/// gpsd's JSON as this reader takes it, one line at a time: the fuzzer's way in (and its corpus replay's).
public enum GPSDJSON {
    /// The fix a line gives, or nil (another report, no fix, no time or position, not JSON).
    public static func fix(_ line: [UInt8]) -> Fix? {
        var satellitesUsed: Int?
        if case .fix(let fix) = GPSDConnection.decode(json: line, satellitesUsed: &satellitesUsed) { return fix }
        return nil
    }
}

/// The bytes gpsd sent, cut into lines (gpsd ends each JSON report with CR LF).
struct LineBuffer {
    /// Longer than any report gpsd writes (its JSON buffer is 10 KB): such a line is dropped whole.
    static let maxLine = 64 << 10
    private var bytes: [UInt8] = []
    private var start = 0
    /// Dropping a line over `maxLine` until its end.
    private var skipping = false
    private(set) var closed = false

    var hasLine: Bool { bytes[start...].contains(UInt8(ascii: "\n")) }

    /// What the socket holds now (never waits): at most 64 KiB a call; 0 bytes read is gpsd gone.
    mutating func fill(from descriptor: Int32) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { closed = true }
        if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { closed = true }
        guard count > 0 else { return }
        if start > 0, start >= bytes.count / 2 {
            bytes.removeFirst(start)
            start = 0
        }
        bytes += chunk[0..<count]
        // A line that never ends within the limit is not kept growing.
        if bytes.count - start > Self.maxLine, !hasLine {
            bytes.removeAll(keepingCapacity: true)
            start = 0
            skipping = true
        }
    }

    /// The next whole line, without its end.
    mutating func next() -> [UInt8]? {
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(bytes[start..<end])
            start = end + 1
            if skipping {
                skipping = false
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            return line
        }
        return nil
    }
}
