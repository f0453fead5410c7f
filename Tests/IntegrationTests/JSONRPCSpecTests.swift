import Foundation
import Testing

/// Every example of the JSON-RPC 2.0 specification that does not depend on the specification's own sample
/// methods, against the real daemon over its real socket (samples renamed to methods driverd has or lacks).
@Suite("JSON-RPC 2.0 specification over the socket", .ownThread)
struct JSONRPCSpecTests {
    let daemon: DaemonProcess

    init() throws { daemon = try DaemonProcess() }

    private func wireError(_ reply: Any?) -> (code: Int, id: Any?)? {
        guard let object = reply as? [String: Any], object["jsonrpc"] as? String == "2.0",
              let error = object["error"] as? [String: Any], let code = error["code"] as? Int,
              error["message"] is String
        else { return nil }
        return (code, object["id"])
    }

    @Test("rpc call of a non-existent method")
    func methodNotFound() throws {
        let connection = try RawConnection(daemon.socketPath)
        let reply = try connection.exchange(#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#)
        let error = try #require(wireError(reply))
        #expect(error.code == -32601)
        #expect(error.id as? String == "1")
    }

    @Test("rpc call with invalid JSON")
    func invalidJSON() throws {
        let connection = try RawConnection(daemon.socketPath)
        let reply = try connection.exchange(#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#)
        let error = try #require(wireError(reply))
        #expect(error.code == -32700)
        #expect(error.id is NSNull)
    }

    @Test("rpc call with invalid Request object")
    func invalidRequestObject() throws {
        let connection = try RawConnection(daemon.socketPath)
        let reply = try connection.exchange(#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#)
        let error = try #require(wireError(reply))
        #expect(error.code == -32600)
        #expect(error.id is NSNull)
    }

    @Test("rpc call Batch, invalid JSON")
    func batchInvalidJSON() throws {
        let connection = try RawConnection(daemon.socketPath)
        let reply = try connection.exchange(
            #"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]"#)
        let error = try #require(wireError(reply))
        #expect(error.code == -32700)
        #expect(error.id is NSNull)
    }

    @Test("rpc call with an empty Array")
    func emptyBatch() throws {
        let connection = try RawConnection(daemon.socketPath)
        let error = try #require(wireError(try connection.exchange("[]")))
        #expect(error.code == -32600)
        #expect(error.id is NSNull)
    }

    @Test("rpc call with an invalid Batch (but not empty)")
    func batchOfOneInvalid() throws {
        let connection = try RawConnection(daemon.socketPath)
        let replies = try #require(try connection.exchange("[1]") as? [Any])
        #expect(replies.count == 1)
        #expect(wireError(replies[0])?.code == -32600)
        #expect(wireError(replies[0])?.id is NSNull)
    }

    @Test("rpc call with invalid Batch")
    func batchOfThreeInvalid() throws {
        let connection = try RawConnection(daemon.socketPath)
        let replies = try #require(try connection.exchange("[1,2,3]") as? [Any])
        #expect(replies.count == 3)
        #expect(replies.allSatisfy { wireError($0)?.code == -32600 })
    }

    @Test("rpc call Batch: results, an invalid request, an unknown method, and a notification left unanswered")
    func mixedBatch() throws {
        let connection = try RawConnection(daemon.socketPath)
        let batch = """
            [{"jsonrpc": "2.0", "method": "agent.describe", "id": "1"},\
            {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},\
            {"jsonrpc": "2.0", "method": "agent.status", "id": "2"},\
            {"foo": "boo"},\
            {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},\
            {"jsonrpc": "2.0", "method": "agent.describe", "id": "9"}]
            """
        let replies = try #require(try connection.exchange(batch) as? [[String: Any]])
        #expect(replies.count == 5)
        let byID = Dictionary(grouping: replies) { ($0["id"] as? String) ?? "null" }
        #expect((byID["1"]?.first?["result"] as? [String: Any])?["apiMajor"] as? Int == 1)
        #expect((byID["2"]?.first?["result"] as? [String: Any])?["uptimeSeconds"] is Double)
        #expect(byID["9"]?.first?["result"] != nil)
        #expect(wireError(byID["5"]?.first)?.code == -32601)
        #expect(wireError(byID["null"]?.first)?.code == -32600)
    }

    @Test("rpc call Batch (all notifications) and a notification get no reply")
    func notificationsAreNeverAnswered() throws {
        let connection = try RawConnection(daemon.socketPath)
        try connection.send(
            #"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#
                + "\n")
        try connection.send(#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"# + "\n")
        try connection.send(#"{"jsonrpc": "2.0", "method": "agent.describe"}"# + "\n")
        // The next line must be the answer to this request: nothing was written for the notifications.
        let reply = try connection.exchange(#"{"jsonrpc": "2.0", "method": "agent.describe", "id": 42}"#)
        #expect((reply as? [String: Any])?["id"] as? Int == 42)
    }

    @Test("id is echoed exactly", arguments: ["\"abc\"", "1", "-7", "1.50", "12345678901234567890", "1e3", "0", "null", "\"\\u00e9\""])
    func idEcho(id: String) throws {
        let connection = try RawConnection(daemon.socketPath)
        try connection.send(#"{"jsonrpc":"2.0","method":"agent.describe","id":"# + id + "}\n")
        let line = try #require(try connection.readLine())
        let expected = id == "\"\\u00e9\"" ? "\"é\"" : id
        #expect(line.hasSuffix(#","id":"# + expected + "}"), "reply: \(line)")
    }

    @Test("invalid params and wrong shapes get -32602 or -32600 and the connection goes on")
    func invalidParams() throws {
        let connection = try RawConnection(daemon.socketPath)
        let cases: [(String, Int)] = [
            (#"{"jsonrpc":"2.0","method":"agent.setLogLevel","params":{"level":"loud"},"id":1}"#, -32602),
            (#"{"jsonrpc":"2.0","method":"agent.setLogLevel","params":{},"id":2}"#, -32602),
            (#"{"jsonrpc":"2.0","method":"agent.setLogLevel","params":["debug"],"id":3}"#, -32602),
            (#"{"jsonrpc":"2.0","method":"agent.status","params":{"x":1},"id":4}"#, -32602),
            (#"{"jsonrpc":"2.0","method":"agent.status","params":"x","id":5}"#, -32600),
            (#"{"jsonrpc":"1.0","method":"agent.status","id":6}"#, -32600),
            (#"{"jsonrpc":"2.0","method":"agent.status","id":{"a":1}}"#, -32600),
            (#""just a string""#, -32600),
        ]
        for (request, code) in cases {
            #expect(wireError(try connection.exchange(request))?.code == code, "\(request)")
        }
        let ok = try connection.exchange(#"{"jsonrpc":"2.0","method":"agent.status","params":{},"id":7}"#)
        #expect((ok as? [String: Any])?["result"] != nil)
    }
}
