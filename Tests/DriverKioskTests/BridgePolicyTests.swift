import DriverAPI
import JSONRPC
import Testing

@testable import DriverKiosk

@Suite("The kiosk bridge's policy")
struct BridgePolicyTests {
    let policy = BridgePolicy()

    func decide(_ text: String) -> BridgeDecision { policy.decide(Array(text.utf8)) }

    func errorCode(_ decision: BridgeDecision) -> Int? {
        guard case .reply(let line) = decision, let value = try? JSONParser.parse(line),
            case .number(let code)? = value["error"]?["code"]
        else { return nil }
        return Int(code)
    }

    @Test("a driver's method is forwarded on one line, its id kept exactly")
    func forwards() {
        let decision = decide("{\"jsonrpc\": \"2.0\",\n \"id\": 1.50, \"method\": \"task.accept\", \"params\": {\"taskId\": \"task-1\"}}")
        guard case .forward(let line) = decision else {
            Issue.record("not forwarded: \(decision)")
            return
        }
        #expect(!line.contains(UInt8(ascii: "\n")))
        #expect(String(decoding: line, as: UTF8.self).contains("\"id\":1.50"))
    }

    @Test("methods outside the screen's list are refused, and never reach driverd", arguments: [
        "agent.setLogLevel", "auth.login", "auth.logout", "config.show", "diag.report", "pod.photo", "gps.requestRate", "no.such",
    ])
    func refuses(method: String) {
        #expect(errorCode(decide("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\(method)\",\"params\":{\"path\":\"/etc/shadow\"}}")) == -32601)
    }

    @Test("a refused notification is dropped unanswered")
    func dropsNotifications() {
        #expect(decide("{\"jsonrpc\":\"2.0\",\"method\":\"auth.logout\"}") == .drop)
    }

    @Test("malformed frames, batches and oversized requests get JSON-RPC errors")
    func malformed() {
        #expect(errorCode(decide("{not json")) == -32700)
        #expect(errorCode(decide("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"route.get\"}]")) == -32600)
        #expect(errorCode(decide("42")) == -32600)
        let big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"route.get\",\"params\":{\"pad\":\"" + String(repeating: "x", count: 2 << 20) + "\"}}"
        #expect(errorCode(decide(big)) == -32600)
    }

    @Test("kiosk.photo takes a PNG or a JPEG and becomes pod.photo with the kiosk's own path")
    func photo() throws {
        // A PNG's signature and a byte: "iVBORw0KGgoA".
        let decision = decide("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"kiosk.photo\",\"params\":{\"taskId\":\"task-2\",\"image\":\"iVBORw0KGgoA\"}}")
        guard case .photo(let id, let taskId, let image, let fileExtension) = decision else {
            Issue.record("not a photo: \(decision)")
            return
        }
        #expect(id == .number("3") && taskId == "task-2" && fileExtension == "png" && image.count == 9)
        let request = try JSONParser.parse(BridgePolicy.photoRequest(id: id, taskId: taskId, path: "/run/driverd-kiosk/photos/a.png"))
        #expect(request["method"] == .string("pod.photo"))
        #expect(request["params"]?["path"] == .string("/run/driverd-kiosk/photos/a.png"))
        #expect(errorCode(decide("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"kiosk.photo\",\"params\":{\"image\":\"aGVsbG8=\"}}")) == -32602)
        #expect(errorCode(decide("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"kiosk.photo\",\"params\":{\"image\":\"***\"}}")) == -32602)
    }

    @Test("base64 decodes with and without padding, and refuses junk")
    func base64() {
        #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(Base64.decode("aGVsbG8") == Array("hello".utf8))
        #expect(Base64.decode("aGV=sbG8") == nil)
        #expect(Base64.decode("a") == nil)
    }
}

@Suite("Who may open the kiosk's bridge")
struct KioskAccessTests {
    let access = KioskAccess(token: "abc123", port: 8080)

    @Test("the token and the kiosk's own origin are both required")
    func check() {
        #expect(access.check(token: "abc123", origin: "http://127.0.0.1:8080") == nil)
        #expect(access.check(token: "abc123", origin: "http://localhost:8080") == nil)
        #expect(access.check(token: nil, origin: "http://127.0.0.1:8080") == .noToken)
        #expect(access.check(token: "abc124", origin: "http://127.0.0.1:8080") == .wrongToken)
        #expect(access.check(token: "abc12", origin: "http://127.0.0.1:8080") == .wrongToken)
        #expect(access.check(token: "abc123", origin: "http://evil.example") == .foreignOrigin("http://evil.example"))
        #expect(access.check(token: "abc123", origin: "http://127.0.0.1:8081") == .foreignOrigin("http://127.0.0.1:8081"))
        #expect(access.check(token: "abc123", origin: nil) == .foreignOrigin(nil))
    }

    @Test("tokens are 64 hex digits and differ")
    func tokens() {
        let a = KioskAccess.randomToken()
        #expect(a.count == 64 && a.allSatisfy(\.isHexDigit))
        #expect(a != KioskAccess.randomToken())
    }
}
