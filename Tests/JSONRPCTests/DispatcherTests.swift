import DriverAPI
import JSONRPC
import Logging
import Testing

/// The specification's rules, without a socket.
@Suite("Dispatcher")
struct DispatcherTests {
    struct EchoParams: Codable, Sendable { var text: String; var times: Int }

    static let echo = Method<EchoParams, [String]>("test.echo", mutating: false)
    static let boom = Method<NoParams, String>("test.boom", mutating: false)
    static let poke = Method<NoParams, String>("test.poke", mutating: true)
    static let view = Method<EchoParams, [String: Double]>("test.view", mutating: false)

    let dispatcher: RPCDispatcher
    let counters = RPCCounters()

    init() {
        var router = RPCRouter()
        router.register(Self.echo) { params, _ in Array(repeating: params.text, count: params.times) }
        router.register(Self.boom) { _, _ in
            struct Secret: Error {}
            throw Secret()
        }
        router.register(Self.poke) { _, _ in "poked" }
        router.register(Self.view) { params, _ in ["times": Double(params.times), "half": 0.5] }
        dispatcher = RPCDispatcher(router: router, counters: counters, logger: Logger(label: "test"))
    }

    func reply(_ text: String, mayMutate: Bool = true) async -> String? {
        let connection = RPCConnection(id: 1, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000, supplementaryGroups: []), mayMutate: mayMutate)
        return await dispatcher.handle(line: Array(text.utf8), connection: connection).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func result() async {
        let text = await reply(#"{"jsonrpc":"2.0","method":"test.echo","params":{"text":"hi","times":2},"id":"x"}"#)
        #expect(text == #"{"jsonrpc":"2.0","result":["hi","hi"],"id":"x"}"#)
    }

    @Test("a result is encoded with sorted keys, whole numbers without a fraction")
    func encodedResult() async throws {
        let text = await reply(#"{"jsonrpc":"2.0","method":"test.view","params":{"text":"","times":3},"id":7}"#)
        #expect(text == #"{"jsonrpc":"2.0","result":{"half":0.5,"times":3},"id":7}"#)
        // Its params are checked like any handler's.
        let invalid = try #require(await reply(#"{"jsonrpc":"2.0","method":"test.view","params":{"text":""},"id":7}"#))
        #expect(invalid.contains("-32602"))
    }

    @Test func invalidParamsNameTheField() async throws {
        let text = try #require(await reply(#"{"jsonrpc":"2.0","method":"test.echo","params":{"text":"hi"},"id":1}"#))
        #expect(text.contains("-32602"))
        #expect(text.contains("missing 'times'"))
        let wrongType = try #require(await reply(#"{"jsonrpc":"2.0","method":"test.echo","params":{"text":"hi","times":"2"},"id":1}"#))
        #expect(wrongType.contains("'times' must be an integer"))
    }

    @Test("internal errors hide their detail")
    func internalError() async {
        let text = await reply(#"{"jsonrpc":"2.0","method":"test.boom","id":1}"#)
        #expect(text == #"{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error"},"id":1}"#)
    }

    @Test("mutating methods need permission")
    func permission() async throws {
        let denied = try #require(await reply(#"{"jsonrpc":"2.0","method":"test.poke","id":1}"#, mayMutate: false))
        #expect(denied.contains(#""code":1001"#))
        let allowed = await reply(#"{"jsonrpc":"2.0","method":"test.poke","id":1}"#, mayMutate: true)
        #expect(allowed == #"{"jsonrpc":"2.0","result":"poked","id":1}"#)
    }

    @Test("notifications are never answered, even failing ones")
    func notifications() async {
        #expect(await reply(#"{"jsonrpc":"2.0","method":"test.boom"}"#) == nil)
        #expect(await reply(#"{"jsonrpc":"2.0","method":"nope"}"#) == nil)
        #expect(await reply(#"[{"jsonrpc":"2.0","method":"nope"},{"jsonrpc":"2.0","method":"test.poke"}]"#) == nil)
    }

    @Test("a request with a readable id but a bad shape echoes the id")
    func invalidRequestKeepsID() async {
        let text = await reply(#"{"jsonrpc":"2.0","method":5,"id":"k"}"#)
        #expect(text == #"{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: 'method' must be a string"},"id":"k"}"#)
    }

    @Test("counts each request and batch element")
    func counting() async {
        _ = await reply(#"[{"jsonrpc":"2.0","method":"test.poke","id":1},{"jsonrpc":"2.0","method":"test.poke"}]"#)
        #expect(counters.requestsServed == 2)
    }
}
