import DriverDomain

/// One reply of an ELM327-compatible adapter, parsed (pure): what came before its `>` prompt.
///
/// Adapters differ (clones, firmware versions, echo and spaces on or off, CAN multi-frame numbering, several
/// engine units answering at once), and a serial line may deliver noise: the parser accepts each form it knows
/// and calls the rest garbage, never guessing.
public enum ELMReply: Sendable, Equatable {
    /// Hex data, one frame per responding unit (a multi-frame answer joined into one).
    case frames([[UInt8]])
    /// A text answer (`OK`, `12.6V`, `ELM327 v1.5`).
    case text(String)
    /// The vehicle did not answer this request (unsupported PID, or no unit awake).
    case noData
    /// The adapter stopped the request (it received a character while waiting): retry.
    case stopped
    /// The adapter did not understand the command.
    case unknownCommand
    /// The adapter could not talk to the vehicle's bus: `UNABLE TO CONNECT`, `BUS INIT: ...ERROR`, `CAN ERROR`,
    /// `BUS ERROR`, `FB ERROR`, `DATA ERROR`, `BUFFER FULL`, `LV RESET`, `ERRxx`.
    case busError(String)
    /// Neither data nor a known answer.
    case garbage(String)

    public var isBusError: Bool {
        if case .busError = self { true } else { false }
    }

    /// Progress lines the adapter prints before the answer.
    private static let progress = ["SEARCHING...", "BUS INIT: ...", "BUS INIT: ...OK", "BUS INIT...", "BUS INIT...OK"]
    private static let busErrors = [
        "UNABLE TO CONNECT", "CAN ERROR", "BUS ERROR", "BUS BUSY", "FB ERROR", "DATA ERROR", "BUFFER FULL", "LV RESET", "ACT ALERT",
        "<RX ERROR", "<DATA ERROR",
    ]

    /// Parses `raw` (everything before the prompt) as the reply to `command`.
    public static func parse(_ raw: String, command: String) -> ELMReply {
        var lines = raw.split(whereSeparator: { $0 == "\r" || $0 == "\n" })
            .map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty && !progress.contains($0) }
        // The command echoed back (echo is on until ATE0 is taken; a reset turns it on again).
        if let first = lines.first, first.replacingSpaces().uppercased() == command.replacingSpaces().uppercased() { lines.removeFirst() }
        guard !lines.isEmpty else { return .garbage("") }
        let upper = lines.map { $0.uppercased() }
        if upper.contains(where: { $0.hasPrefix("BUS INIT") && $0.hasSuffix("ERROR") }) { return .busError("BUS INIT: ERROR") }
        if let error = upper.first(where: { line in busErrors.contains(where: { line.hasPrefix($0) }) || isErrorNumber(line) }) {
            return .busError(error)
        }
        if upper.contains("NO DATA") { return .noData }
        if upper.contains("STOPPED") { return .stopped }
        if upper == ["?"] { return .unknownCommand }
        // A text answer is one short printable line, to an AT command (an OBD request that gets text got noise);
        // before the frames: `ATDPN`'s `A6` is text that happens to be hex.
        if command.uppercased().hasPrefix("AT"), lines.count == 1, lines[0].utf8.count <= 64, lines[0].utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return .text(lines[0]) }
        if let frames = parseFrames(upper) { return .frames(frames) }
        return .garbage(String(lines.joined(separator: " ").prefix(64)))
    }

    /// `ERR94` and the like.
    private static func isErrorNumber(_ line: String) -> Bool {
        line.hasPrefix("ERR") && line.count == 5 && line.dropFirst(3).allSatisfy(\.isHexDigit)
    }

    /// Hex lines as frames; nil when any line is not hex. A CAN multi-frame answer (headers off) comes as a length
    /// line (`00A`) and numbered lines (`0: 43 04 ...`, `1: ...`): joined into one frame of that length.
    private static func parseFrames(_ lines: [String]) -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        var multi: [UInt8]? = nil
        var multiLength: Int? = nil
        for line in lines {
            let compact = line.replacingSpaces()
            // Three hex digits (Int(_:radix:) would also take "-10" or "+1F": a negative length trapped, found by fuzzing).
            if compact.utf8.count == 3, compact.utf8.allSatisfy({ nibble($0) != nil }), let length = Int(compact, radix: 16), multi == nil {
                multiLength = length
                multi = []
                continue
            }
            if let colon = compact.firstIndex(of: ":"), compact.distance(from: compact.startIndex, to: colon) == 1 {
                guard multi != nil, let bytes = hexBytes(compact[compact.index(after: colon)...]) else { return nil }
                multi! += bytes
                continue
            }
            guard let bytes = hexBytes(Substring(compact)), !bytes.isEmpty else { return nil }
            frames.append(bytes)
        }
        if let multi {
            guard !multi.isEmpty else { return nil }
            frames.insert(Array(multi.prefix(multiLength ?? multi.count)), at: 0)
        }
        return frames.isEmpty ? nil : frames
    }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension String {
    func replacingSpaces() -> String { String(filter { $0 != " " }) }
}
