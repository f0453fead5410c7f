import Testing
@testable import OBDKit

@Suite struct ELMReplyTests {
    @Test func dataWithAndWithoutSpacesEchoAndSearching() {
        #expect(ELMReply.parse("410D0A\r\r", command: "010D") == .frames([[0x41, 0x0D, 0x0A]]))
        #expect(ELMReply.parse("41 0D 0A \r\r", command: "010D") == .frames([[0x41, 0x0D, 0x0A]]))
        #expect(ELMReply.parse("010D\r410D0A\r\r", command: "010D") == .frames([[0x41, 0x0D, 0x0A]]))
        #expect(ELMReply.parse("SEARCHING...\r4100BE3FA813\r\r", command: "0100") == .frames([[0x41, 0x00, 0xBE, 0x3F, 0xA8, 0x13]]))
        #expect(ELMReply.parse("BUS INIT: ...OK\r410C0FA0\r", command: "010C") == .frames([[0x41, 0x0C, 0x0F, 0xA0]]))
    }

    @Test func severalUnitsAndMultiFrame() {
        #expect(ELMReply.parse("4100BE3FA813\r4100 80 00 00 01\r", command: "0100") == .frames([
            [0x41, 0x00, 0xBE, 0x3F, 0xA8, 0x13], [0x41, 0x00, 0x80, 0x00, 0x00, 0x01],
        ]))
        // CAN, headers off: a length line, then numbered frames; padding beyond the length dropped.
        #expect(ELMReply.parse("00A\r0: 43 04 01 43 01 96\r1: 02 34 03 00 00 00 00\r", command: "03") == .frames([
            [0x43, 0x04, 0x01, 0x43, 0x01, 0x96, 0x02, 0x34, 0x03, 0x00],
        ]))
    }

    @Test func errorsAndText() {
        #expect(ELMReply.parse("NO DATA\r\r", command: "01A6") == .noData)
        #expect(ELMReply.parse("SEARCHING...\rUNABLE TO CONNECT\r", command: "0100") == .busError("UNABLE TO CONNECT"))
        #expect(ELMReply.parse("BUS INIT: ...ERROR\r", command: "0100") == .busError("BUS INIT: ERROR"))
        #expect(ELMReply.parse("CAN ERROR\r", command: "0100") == .busError("CAN ERROR"))
        #expect(ELMReply.parse("ERR94\r", command: "0100") == .busError("ERR94"))
        #expect(ELMReply.parse("STOPPED\r", command: "010D") == .stopped)
        #expect(ELMReply.parse("?\r\r", command: "XYZ") == .unknownCommand)
        #expect(ELMReply.parse("ATE0\rOK\r\r", command: "ATE0") == .text("OK"))
        #expect(ELMReply.parse("12.6V\r", command: "ATRV") == .text("12.6V"))
        // The protocol number is text, though it reads as hex.
        #expect(ELMReply.parse("A6\r\r", command: "ATDPN") == .text("A6"))
        #expect(ELMReply.parse("\r\r\rELM327 v1.5\r\r", command: "ATZ") == .text("ELM327 v1.5"))
    }

    @Test func garbageAndPartialLinesAreNeverData() {
        #expect(ELMReply.parse("", command: "010D") == .garbage(""))
        #expect(ELMReply.parse("41 0D 0\r", command: "010D") == .garbage("41 0D 0"))
        #expect(ELMReply.parse("\u{1}\u{2}zz\r41 0D\r", command: "010D") == .garbage("\u{1}\u{2}zz 41 0D"))
        #expect(ELMReply.parse("0: 43 01\r", command: "03") == .garbage("0: 43 01"))
        // A length line that is not three hex digits (line noise: "-10" parsed as -16 trapped, found by fuzzing).
        #expect(ELMReply.parse("-10\r0: 410D000C0C C00C80\r1:C0\r", command: "011F") == .garbage("-10 0: 410D000C0C C00C80 1:C0"))
        #expect(ELMReply.parse("+1F\r0: 41 0D\r", command: "010D") == .garbage("+1F 0: 41 0D"))
    }
}

@Suite struct OBDDecodingTests {
    @Test func modeOnePIDs() {
        #expect(OBDDecoding.decode(.speed, frames: [[0x41, 0x0D, 54]]) == .speed(15))
        #expect(OBDDecoding.decode(.rpm, frames: [[0x41, 0x0C, 0x1A, 0xF8]]) == .rpm(1726))
        #expect(OBDDecoding.decode(.fuelLevel, frames: [[0x41, 0x2F, 0xFF]]) == .fuelPercent(100))
        #expect(OBDDecoding.decode(.odometer, frames: [[0x41, 0xA6, 0x00, 0x01, 0xE2, 0x40]]) == .odometerKm(12345.6))
        #expect(OBDDecoding.decode(.runTime, frames: [[0x41, 0x1F, 0x01, 0x2C]]) == .runSeconds(300))
        #expect(OBDDecoding.decode(.status, frames: [[0x41, 0x01, 0x83, 0x07, 0xA1, 0x00]]) == .status(checkEngine: true, storedCodes: 3))
        // The engine unit's supply in millivolts: the battery's voltage without an ATRV of its own.
        #expect(OBDDecoding.decode(.moduleVoltage, frames: [[0x41, 0x42, 0x36, 0xB0]]) == .voltage(14.0))
        #expect(OBDDecoding.decode(.moduleVoltage, frames: [[0x41, 0x42, 0x36]]) == nil)
        // Another unit's answer first, then the one asked for.
        #expect(OBDDecoding.decode(.speed, frames: [[0x41, 0x0C, 0, 0], [0x41, 0x0D, 36]]) == .speed(10))
        // Short data, another mode's echo (one emulator answers A6 with 61): unknown, never a wrong value.
        #expect(OBDDecoding.decode(.rpm, frames: [[0x41, 0x0C, 0x1A]]) == nil)
        #expect(OBDDecoding.decode(.odometer, frames: [[0x61, 0xA6, 0, 0, 0xEA, 0x5C]]) == nil)
    }

    @Test func severalPIDsInOneAnswer() {
        #expect(OBDPID.request([.speed, .rpm, .fuelLevel]) == "010D0C2F")
        // The emulator's CAN answer to 010D0C2FA61F, as ELMReply joins its frames.
        let frames = ELMReply.parse("010\r0: 410D000C0C80\r1: 2F99A60001D4C0\r2: 1F0000\r\r", command: "010D0C2FA61F")
        guard case .frames(let joined) = frames else {
            Issue.record("not frames: \(frames)")
            return
        }
        let all: [OBDPID] = [.speed, .rpm, .fuelLevel, .odometer, .runTime]
        #expect(OBDDecoding.decode(several: all, frames: joined) == [
            .speed: .speed(0), .rpm: .rpm(800), .fuelLevel: .fuelPercent(60), .odometer: .odometerKm(12000), .runTime: .runSeconds(0),
        ])
        // Six PIDs, the voltage last: what the reader asks parked with the engine on (one request a minute).
        let six: [OBDPID] = [.speed, .rpm, .fuelLevel, .odometer, .runTime, .moduleVoltage]
        #expect(OBDPID.request(six) == "010D0C2FA61F42")
        #expect(OBDDecoding.decode(several: six, frames: [[0x41, 0x0D, 0, 0x0C, 0x0C, 0x80, 0x2F, 0x99, 0xA6, 0, 1, 0xD4, 0xC0, 0x1F, 0, 0, 0x42, 0x36, 0xB0]])[.moduleVoltage]
            == .voltage(14.0))
        // A PID the vehicle left out is absent; one not asked for is skipped by its length; a second unit fills in.
        #expect(OBDDecoding.decode(several: [.speed, .fuelLevel], frames: [[0x41, 0x0C, 0x0C, 0x80, 0x0D, 36], [0x41, 0x2F, 0xFF]])
            == [.speed: .speed(10), .fuelLevel: .fuelPercent(100)])
        // A PID this reader does not know ends the frame (its length is unknown); a cut-off value is no value.
        #expect(OBDDecoding.decode(several: [.speed, .rpm], frames: [[0x41, 0x05, 0x7B, 0x0D, 36]]) == [:])
        #expect(OBDDecoding.decode(several: [.speed, .rpm], frames: [[0x41, 0x0D, 36, 0x0C, 0x1A]]) == [.speed: .speed(10)])
    }

    @Test func canProtocolsTakeSeveralPIDs() {
        #expect(OBDDecoding.isCAN(protocolNumber: "A6"))
        #expect(OBDDecoding.isCAN(protocolNumber: "6"))
        #expect(OBDDecoding.isCAN(protocolNumber: "A9"))
        #expect(OBDDecoding.isCAN(protocolNumber: "c"))
        #expect(!OBDDecoding.isCAN(protocolNumber: "A3"))
        #expect(!OBDDecoding.isCAN(protocolNumber: "5"))
        #expect(!OBDDecoding.isCAN(protocolNumber: "0"))
        #expect(!OBDDecoding.isCAN(protocolNumber: "?"))
        #expect(!OBDDecoding.isCAN(protocolNumber: "AUTO"))
    }

    @Test func supportedPIDs() {
        let (pids, more) = OBDDecoding.supported(base: 0x00, frames: [[0x41, 0x00, 0xBE, 0x3F, 0xA8, 0x13]])
        #expect(pids.contains(0x01) && pids.contains(0x0C) && pids.contains(0x0D) && pids.contains(0x20))
        #expect(!pids.contains(0x02))
        #expect(more)
        let (high, last) = OBDDecoding.supported(base: 0xA0, frames: [[0x41, 0xA0, 0x04, 0x00, 0x00, 0x00]])
        #expect(high == [0xA6])
        #expect(!last)
    }

    @Test func faultCodes() {
        // CAN: a count byte, then pairs.
        #expect(OBDDecoding.faults(frames: [[0x43, 0x02, 0x01, 0x43, 0x03, 0x00]], pending: false) == .faults(codes: ["P0143", "P0300"], pending: false))
        // Older buses: three pairs a line, padded with 0000, no count.
        #expect(OBDDecoding.faults(frames: [[0x47, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00]], pending: true) == .faults(codes: ["P0301"], pending: true))
        #expect(OBDDecoding.faults(frames: [[0x43, 0x00]], pending: false) == .faults(codes: [], pending: false))
        #expect(OBDDecoding.dtc(0xC1, 0x23) == "U0123")
        #expect(OBDDecoding.dtc(0x41, 0x23) == "C0123")
        #expect(OBDDecoding.dtc(0x92, 0x34) == "B1234")
        #expect(OBDDecoding.faults(frames: [[0x41, 0x0D, 0]], pending: false) == nil)
    }

    @Test func voltage() {
        #expect(OBDDecoding.voltage("12.6V") == 12.6)
        #expect(OBDDecoding.voltage("14,1 V") == 14.1)
        #expect(OBDDecoding.voltage("OK") == nil)
        #expect(OBDDecoding.voltage("99V") == nil)
    }

    @Test func addresses() {
        #expect(OBDAdapterAddress(parsing: "/dev/ttyUSB0", baud: 38400) == .serial(path: "/dev/ttyUSB0", baud: 38400))
        #expect(OBDAdapterAddress(parsing: "192.168.0.10:35000", baud: 38400) == .tcp(host: "192.168.0.10", port: 35000))
        #expect(OBDAdapterAddress(parsing: "[::1]:35000", baud: 38400) == .tcp(host: "::1", port: 35000))
        #expect(OBDAdapterAddress(parsing: "nowhere", baud: 38400) == nil)
        #expect(OBDAdapterAddress(parsing: ":35000", baud: 38400) == nil)
    }
}
