/// Mode 01 PIDs driverd reads, and how their bytes decode (SAE J1979), pure.
public enum OBDPID: UInt8, Sendable, CaseIterable {
    case status = 0x01
    case rpm = 0x0C
    case speed = 0x0D
    case runTime = 0x1F
    case fuelLevel = 0x2F
    /// The engine unit's supply voltage: the battery's, read in the same request as the other PIDs (no `ATRV`).
    case moduleVoltage = 0x42
    case odometer = 0xA6

    /// The request, as sent (`010D`).
    public var request: String { "01" + hex(rawValue) }

    /// One request for up to six PIDs (`010D0C2F`), which CAN vehicles answer in one reply (SAE J1979).
    public static func request(_ pids: [OBDPID]) -> String { "01" + pids.map { hex($0.rawValue) }.joined() }

    /// The data bytes the vehicle sends for this PID: what splits a several-PID answer.
    var dataLength: Int {
        switch self {
        case .status, .odometer: 4
        case .rpm, .runTime, .moduleVoltage: 2
        case .speed, .fuelLevel: 1
        }
    }
}

/// What one answer said.
public enum OBDReading: Sendable, Equatable {
    /// m/s (the car reports whole km/h).
    case speed(Double)
    case rpm(Double)
    case fuelPercent(Double)
    case odometerKm(Double)
    case runSeconds(Int)
    /// The check-engine light and the number of stored codes (PID 01).
    case status(checkEngine: Bool, storedCodes: Int)
    /// Mode 03 (stored) or mode 07 (pending) codes, `P0301` style.
    case faults(codes: [String], pending: Bool)
    /// The vehicle's battery: the adapter's supply (`ATRV`, also with the engine units asleep) or the engine
    /// unit's (PID 42, while it answers).
    case voltage(Double)
}

public enum OBDDecoding {
    /// The reading a mode 01 answer carries for `pid`: the first frame that answers it (several units may answer;
    /// the engine unit answers first on CAN). nil when none does, or its data is short.
    public static func decode(_ pid: OBDPID, frames: [[UInt8]]) -> OBDReading? {
        guard let data = frames.first(where: { $0.count >= 2 && $0[0] == 0x41 && $0[1] == pid.rawValue }).map({ Array($0.dropFirst(2)) }) else {
            return nil
        }
        func need(_ count: Int) -> Bool { data.count >= count }
        switch pid {
        case .status:
            guard need(1) else { return nil }
            return .status(checkEngine: data[0] & 0x80 != 0, storedCodes: Int(data[0] & 0x7F))
        case .rpm:
            guard need(2) else { return nil }
            return .rpm(Double(Int(data[0]) << 8 | Int(data[1])) / 4)
        case .speed:
            guard need(1) else { return nil }
            return .speed(Double(data[0]) / 3.6)
        case .runTime:
            guard need(2) else { return nil }
            return .runSeconds(Int(data[0]) << 8 | Int(data[1]))
        case .fuelLevel:
            guard need(1) else { return nil }
            return .fuelPercent(Double(data[0]) * 100 / 255)
        case .moduleVoltage:
            guard need(2) else { return nil }
            return .voltage(Double(Int(data[0]) << 8 | Int(data[1])) / 1000)
        case .odometer:
            guard need(4) else { return nil }
            let tenths = UInt32(data[0]) << 24 | UInt32(data[1]) << 16 | UInt32(data[2]) << 8 | UInt32(data[3])
            return .odometerKm(Double(tenths) / 10)
        }
    }

    /// The readings a several-PID answer (`41 0D 00 0C 0C 80 2F 99`) carries for `pids`, each unit's frame split PID
    /// by PID (the first unit to answer a PID wins, as in `decode`). A PID the vehicle left out is absent; a PID
    /// this reader does not know ends that frame (its length is unknown).
    public static func decode(several pids: [OBDPID], frames: [[UInt8]]) -> [OBDPID: OBDReading] {
        var readings: [OBDPID: OBDReading] = [:]
        for frame in frames where frame.first == 0x41 {
            var index = 1
            while index < frame.count, let pid = OBDPID(rawValue: frame[index]) {
                let end = index + 1 + pid.dataLength
                guard end <= frame.count else { break }
                if pids.contains(pid), readings[pid] == nil, let reading = decode(pid, frames: [[0x41] + frame[index..<end]]) {
                    readings[pid] = reading
                }
                index = end
            }
        }
        return readings
    }

    /// Whether the protocol `ATDPN` names (`A6`: found automatically, 6) is CAN (6 to C), whose vehicles take
    /// several PIDs in one request; the older buses (PWM, VPW, ISO 9141, KWP) do not.
    public static func isCAN(protocolNumber text: String) -> Bool {
        let compact = text.uppercased().replacingSpaces()
        let digits = compact.hasPrefix("A") && compact.count == 2 ? compact.dropFirst() : Substring(compact)
        guard digits.count == 1, let number = Int(digits, radix: 16) else { return false }
        return (6...12).contains(number)
    }

    /// The PIDs a supported-PIDs answer (`0100`, `0120`, ... `01A0`) claims, from every unit that answered; and
    /// whether the next group (`base + 0x20`) is supported, so worth asking.
    public static func supported(base: UInt8, frames: [[UInt8]]) -> (pids: Set<UInt8>, more: Bool) {
        var pids = Set<UInt8>()
        for frame in frames where frame.count >= 6 && frame[0] == 0x41 && frame[1] == base {
            for (byteIndex, byte) in frame[2..<6].enumerated() {
                for bit in 0..<8 where byte & (0x80 >> bit) != 0 {
                    pids.insert(base &+ UInt8(byteIndex * 8 + bit + 1))
                }
            }
        }
        return (pids, pids.contains(base &+ 0x20))
    }

    /// The codes of a mode 03 (`43`) or mode 07 (`47`) answer. On CAN the byte after the mode is the count of
    /// codes; older buses pad each line to three codes with `0000` instead. An odd number of bytes after the mode
    /// byte means a count byte is there. `0000` is no code.
    public static func faults(frames: [[UInt8]], pending: Bool) -> OBDReading? {
        let mode: UInt8 = pending ? 0x47 : 0x43
        let answers = frames.filter { $0.first == mode }
        guard !answers.isEmpty else { return nil }
        var codes: [String] = []
        for frame in answers {
            var data = Array(frame.dropFirst())
            if data.count % 2 == 1 { data.removeFirst() }
            var index = 0
            while index + 1 < data.count {
                let (a, b) = (data[index], data[index + 1])
                index += 2
                guard a != 0 || b != 0 else { continue }
                let code = dtc(a, b)
                if !codes.contains(code) { codes.append(code) }
            }
        }
        return .faults(codes: codes, pending: pending)
    }

    /// A PID as the adapter spells it (`0D`, `A6`).
    public static func pidName(_ pid: UInt8) -> String { hex(pid) }

    /// Two bytes as SAE J2012: the top two bits pick P, C, B or U, the next two the first digit.
    public static func dtc(_ a: UInt8, _ b: UInt8) -> String {
        let letter = ["P", "C", "B", "U"][Int(a >> 6)]
        return letter + String((a >> 4) & 0x3) + hexDigit(a & 0xF) + hex(b)
    }

    /// `12.6V` (some clones: `12.6 V`, `12,6V`) as volts; nil when it is not a voltage in a car's range.
    public static func voltage(_ text: String) -> Double? {
        let trimmed = text.uppercased().replacingSpaces().replacingOccurrences(",", with: ".")
        guard trimmed.hasSuffix("V"), let volts = Double(trimmed.dropLast()), (0...36).contains(volts) else { return nil }
        return volts
    }
}

func hex(_ byte: UInt8) -> String { hexDigit(byte >> 4) + hexDigit(byte & 0xF) }

private func hexDigit(_ nibble: UInt8) -> String {
    String(UnicodeScalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10))
}

extension String {
    func replacingOccurrences(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
