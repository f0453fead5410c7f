import DriverAPI
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `pings.log`: pings (and the odometer's state) whose commit window ended before the backend took them, appended
/// and synced in one write per group commit, then folded into the database in bulk (`Store.foldPingLog`).
///
/// Why not the database at once: a commit there appends whole 4 KiB pages to SQLite's log, each frame over two pages
/// of the page cache (about 8 KiB written per synced commit, measured), where a few hundred bytes of pings append
/// here for one page. Offline, one group commit every few seconds for hours, that is the flash's wear.
///
/// A record: length (u32, little-endian), CRC-32 of the body (u32), the body (a kind byte, then the fields). A power
/// cut tears at most the last, unsynced record: reading stops at the first record whose length or CRC is wrong.
struct PingLog {
    enum Entry: Equatable {
        case ping(PingRecord)
        case travel(TravelRecord)
    }

    let path: String
    /// Where `setAside` moves the log for a fold, so appends go on in a new file while the fold waits for the database.
    let setAsidePath: String
    private var fd: Int32 = -1
    /// Ping records in the file, and its length.
    private(set) var pings = 0
    private(set) var bytes = 0
    /// Ping records in the file set aside, until a fold has moved them into the database.
    private(set) var setAsidePings = 0
    /// The id the next ping gets: above every id in the database, the log and the newest ever put in a batch.
    var nextId: Int64 = 1

    init(directory: String) {
        path = directory + "/pings.log"
        setAsidePath = directory + "/pings.folding.log"
    }

    /// The valid records of the log (none when there is none).
    func read() throws -> [Entry] { try Self.read(path) }

    /// The valid records of the file at `path` (none when there is none).
    static func read(_ path: String) throws -> [Entry] {
        guard let data = try DurableFile.contents(path) else { return [] }
        var entries: [Entry] = []
        var offset = 0
        let bytes = [UInt8](data)
        while offset + 8 <= bytes.count {
            let length = Int(Self.uint32(bytes, offset)), crc = Self.uint32(bytes, offset + 4)
            guard length > 0, offset + 8 + length <= bytes.count else { break }
            let body = bytes[(offset + 8)..<(offset + 8 + length)]
            // A bad checksum is the torn tail of a power cut: nothing after it was acknowledged.
            guard CRC32.checksum(body) == crc else { break }
            // Whole but not understood (a kind of a later release): passed over, the records after it still count.
            if let entry = Self.decode(body) { entries.append(entry) }
            offset += 8 + length
        }
        return entries
    }

    /// Appends the entries in one write and syncs them; the file (and its name) is made durable on first use.
    mutating func append(_ entries: [Entry]) throws {
        if fd < 0 {
            fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw DurableFile.Failure(call: "open", path: path, errno: errno) }
            try DurableFile.syncDirectory(DurableFile.directory(of: path))
        }
        var out: [UInt8] = []
        for entry in entries {
            let body = try Self.encode(entry)
            Self.append(UInt32(body.count), to: &out)
            Self.append(CRC32.checksum(body[...]), to: &out)
            out += body
        }
        // A short write (a file-size limit, the last blocks of a disk) is followed by one for the rest, whose errno
        // says why (EFBIG, ENOSPC): the store's health reads it.
        var done = 0
        while done < out.count {
            let written = out.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let failure = DurableFile.Failure(call: "write", path: path, errno: written < 0 ? errno : EIO)
                // Part of a record written: cut back to the whole ones.
                _ = ftruncate(fd, off_t(bytes))
                throw failure
            }
            done += written
        }
        while fdatasync(fd) != 0 {
            guard errno == EINTR else {
                let failure = DurableFile.Failure(call: "fdatasync", path: path, errno: errno)
                // Not on disk: the pings stay held and are appended again, so these copies go (else a fold would
                // find them twice, under two ids).
                _ = ftruncate(fd, off_t(bytes))
                throw failure
            }
        }
        bytes += out.count
        pings += entries.count(where: { if case .ping = $0 { true } else { false } })
    }

    /// Renames the file to `setAsidePath` for a fold (false when it is empty or absent, or one set aside before is
    /// still there, which must be folded first); the next append starts a new file. Its records are synced already,
    /// and the rename is made durable by the next append's directory sync or the fold's own: a power cut before
    /// either leaves the file under its old name, to be folded at the next start.
    mutating func setAside() throws -> Bool {
        guard try DurableFile.sizeIfPresent(setAsidePath) == nil, (try DurableFile.sizeIfPresent(path) ?? 0) > 0 else { return false }
        guard rename(path, setAsidePath) == 0 else { throw DurableFile.Failure(call: "rename", path: path, errno: errno) }
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        (setAsidePings, pings, bytes) = (pings, 0, 0)
        return true
    }

    /// The set-aside file (if any) was folded into the database and removed; `newest` is the highest ping id there.
    mutating func folded(newest: Int64) {
        setAsidePings = 0
        nextId = max(nextId, newest + 1)
    }

    // MARK: Records

    private static func encode(_ entry: Entry) throws -> [UInt8] {
        var body: [UInt8] = []
        switch entry {
        case .ping(let ping):
            body.append(1)
            append(UInt64(bitPattern: ping.id ?? 0), to: &body)
            for value in [ping.fixTime, ping.latitude, ping.longitude, ping.recordedAt] { append(value.bitPattern, to: &body) }
            for value in [ping.altitude, ping.speed, ping.track, ping.climb, ping.horizontalError, ping.verticalError] {
                append((value ?? .nan).bitPattern, to: &body)
            }
            append(UInt32(truncatingIfNeeded: ping.fixMode), to: &body)
            append(UInt32(bitPattern: Int32(truncatingIfNeeded: ping.satellites ?? -1)), to: &body)
            for text in [ping.motion, ping.reason, ping.timeSource ?? "", ping.batchId ?? ""] { append(text, to: &body) }
        case .travel(let travel):
            body.append(2)
            body += try Codec.encode(travel)
        }
        return body
    }

    private static func decode(_ body: ArraySlice<UInt8>) -> Entry? {
        var reader = Reader(bytes: body)
        switch reader.byte() {
        case 1:
            guard let id = reader.uint64(), let fixTime = reader.double(), let lat = reader.double(), let lng = reader.double(),
                  let recordedAt = reader.double()
            else { return nil }
            var optionals: [Double?] = []
            for _ in 0..<6 {
                guard let value = reader.double() else { return nil }
                optionals.append(value.isNaN ? nil : value)
            }
            guard let mode = reader.uint32(), let satellites = reader.uint32(), let motion = reader.text(), let reason = reader.text(),
                  let source = reader.text(), let batch = reader.text()
            else { return nil }
            var ping = PingRecord(
                fix: Fix(
                    time: fixTime, latitude: lat, longitude: lng, altitude: optionals[0], speed: optionals[1], track: optionals[2],
                    climb: optionals[3], horizontalError: optionals[4], verticalError: optionals[5], mode: Int(mode),
                    satellitesUsed: Int32(bitPattern: satellites) < 0 ? nil : Int(Int32(bitPattern: satellites))),
                motion: .stationary, reason: .interval, recordedAt: recordedAt)
            ping.id = Int64(bitPattern: id)
            ping.motion = motion
            ping.reason = reason
            ping.timeSource = source.isEmpty ? nil : source
            ping.batchId = batch.isEmpty ? nil : batch
            return .ping(ping)
        case 2:
            // Expected to fail only for a record of another release's shape: passed over (see read()).
            return (try? Codec.decode(TravelRecord.self, from: reader.rest)).map(Entry.travel)
        default:
            return nil
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = Array(text.utf8.prefix(255))
        bytes.append(UInt8(utf8.count))
        bytes += utf8
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    /// Reads a record's fields in order; nil past its end.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var rest: ArraySlice<UInt8> { bytes }

        mutating func byte() -> UInt8? { bytes.popFirst() }

        mutating func uint64() -> UInt64? { integer(8).map { $0 } }
        mutating func uint32() -> UInt32? { integer(4).map { UInt32($0) } }
        mutating func double() -> Double? { uint64().map(Double.init(bitPattern:)) }

        mutating func text() -> String? {
            guard let count = byte(), bytes.count >= Int(count) else { return nil }
            defer { bytes = bytes.dropFirst(Int(count)) }
            return String(decoding: bytes.prefix(Int(count)), as: UTF8.self)
        }

        private mutating func integer(_ count: Int) -> UInt64? {
            guard bytes.count >= count else { return nil }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
        }
    }
}

/// CRC-32 (IEEE 802.3, the polynomial of zlib and Ethernet).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
