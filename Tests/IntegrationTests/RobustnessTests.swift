import Foundation
import JSONRPC
import DriverAPI
import Testing

/// Bad input and bad clients never take the daemon down or hold up anyone else.
@Suite("Socket robustness", .ownThread)
struct RobustnessTests {
    let daemon: DaemonProcess

    init() throws { daemon = try DaemonProcess() }

    private func assertServes() throws {
        let status = try daemon.client().call(Methods.agentStatus, NoParams())
        #expect(status.apiMajor == APIVersion.major)
    }

    @Test("garbage bytes, NUL and invalid UTF-8 get parse errors and the connection keeps working")
    func garbage() throws {
        let connection = try RawConnection(daemon.socketPath)
        var generator = SystemRandomNumberGenerator()
        for length in [1, 7, 300, 5000] {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes.removeAll { $0 == UInt8(ascii: "\n") }
            // Start with a byte that can never begin JSON, so every line is a parse error.
            try connection.send([0x00] + bytes + [UInt8(ascii: "\n")])
            let line = try #require(try connection.readLine())
            #expect(line.contains("-32700"), "\(line)")
        }
        try connection.send([0xFF, 0xFE, UInt8(ascii: "{"), UInt8(ascii: "\n")])
        #expect(try #require(try connection.readLine()).contains("-32700"))
        try connection.send(Array(#"{"jsonrpc":"2.0","method":"x","id":"\u{0}"}"#.utf8) + [0xC3, 0x28, UInt8(ascii: "\n")])
        #expect(try #require(try connection.readLine()).contains("-32700"))
        let reply = try connection.exchange(#"{"jsonrpc":"2.0","method":"agent.describe","id":1}"#)
        #expect((reply as? [String: Any])?["result"] != nil)
        try assertServes()
    }

    @Test("a 2 MiB line gets an error and its connection is closed; others are served throughout")
    func oversizedLine() throws {
        let bystander = try daemon.client()
        let connection = try RawConnection(daemon.socketPath)
        let huge = #"{"jsonrpc":"2.0","method":"agent.describe","params":{"pad":""# + String(repeating: "a", count: 2 << 20) + #""},"id":1}"#
        // Send in pieces and check the bystander between them: the big sender holds up no one.
        let bytes = Array(huge.utf8)
        var sent = 0
        var closedEarly = false
        while sent < bytes.count {
            let end = min(sent + 256 * 1024, bytes.count)
            do {
                try connection.send(Array(bytes[sent..<end]))
            } catch {
                closedEarly = true  // the daemon closed after the limit: expected
                break
            }
            sent = end
            _ = try bystander.call(Methods.agentDescribe, NoParams())
        }
        if !closedEarly { try? connection.send("\n") }
        let line = try #require(try connection.readLine(), "expected an error line before the close")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((reply["error"] as? [String: Any])?["code"] as? Int == -32600)
        #expect(reply["id"] is NSNull)
        #expect(try connection.readLine() == nil, "the connection must be closed after an oversized line")
        try assertServes()
    }

    @Test("a client that sends half a line and stalls holds up no one, and is answered when it finishes")
    func stalledClient() throws {
        let staller = try RawConnection(daemon.socketPath)
        try staller.send(#"{"jsonrpc":"2.0","method":"agent.desc"#)
        for _ in 0..<20 { try assertServes() }
        try staller.send(#"ribe","id":"late"}"# + "\n")
        let reply = try #require(try staller.readLine())
        #expect(reply.contains(#""id":"late""#))
    }

    @Test("clients that disconnect mid-line or mid-reply leave the daemon serving")
    func abruptDisconnects() throws {
        for index in 0..<50 {
            let connection = try RawConnection(daemon.socketPath)
            if index.isMultiple(of: 2) {
                try connection.send(#"{"jsonrpc":"2.0","meth"#)
            } else {
                // Ask for a reply and vanish before reading it.
                try connection.send(String(repeating: #"{"jsonrpc":"2.0","method":"agent.status","id":1}"# + "\n", count: 20))
            }
        }
        try assertServes()
    }

    @Test("a request without its final newline is answered after the client half-closes")
    func halfClose() throws {
        let connection = try RawConnection(daemon.socketPath)
        try connection.send(#"{"jsonrpc":"2.0","method":"agent.describe","id":7}"#)
        connection.shutdownWrite()
        let reply = try #require(try connection.readLine())
        #expect(reply.contains(#""id":7"#))
    }

    @Test("200 concurrent clients are all served")
    func concurrentClients() async throws {
        let socketPath = daemon.socketPath
        let clients = 200, callsEach = 5
        // Connect everyone first so the connections really are open at the same time.
        let connections = try (0..<clients).map { _ in try RPCClient(socketPath: socketPath, timeout: .seconds(30)) }
        let results = await withTaskGroup(of: Int.self) { group in
            for connection in connections {
                let box = UncheckedBox(connection)
                group.addTask {
                    var ok = 0
                    for _ in 0..<callsEach {
                        if (try? box.value.call(Methods.agentStatus, NoParams())) != nil { ok += 1 }
                    }
                    return ok
                }
            }
            return await group.reduce(0, +)
        }
        #expect(results == clients * callsEach)
        let status = try daemon.client().call(Methods.agentStatus, NoParams())
        #expect(status.rpc.openConnections >= clients)
    }
}

/// Moves a non-Sendable client into a task that alone uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
