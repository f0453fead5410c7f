import BackendContract
import DriverAPI
import DriverDaemon
import DriverDomain
import DriverKiosk
import FoundationEssentials
import GPSKit
import JSONRPC
import Logging
import OBDKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Every parser of outside input, each as one function of bytes: what `make fuzz` hands libFuzzer
/// (`Fuzz/`, built with `-sanitize=fuzzer,address`) and what `make test` replays over the corpus in the repository
/// (`Tests/FuzzCorpus/<name>/`). A target crashes (a `precondition`) where an answer breaks a rule the daemon relies
/// on, besides any trap, overflow or memory error in the parser itself.
public enum FuzzTargets {
    public struct Target: Sendable {
        public let name: String
        /// What the input is, and what each run checks.
        public let summary: String
        public let run: @Sendable ([UInt8]) -> Void
    }

    public static let all: [Target] = [
        Target(name: "gpsd-json", summary: "one line of gpsd's JSON through libgps (gps_unpack) and the reader's conversion, then the fix-quality filter and the motion detector", run: gpsdJSON),
        Target(name: "elm327-reply", summary: "an adapter's reply (first line: the command) through the reply parser and every PID, fault-code and voltage decoder", run: elm327Reply),
        Target(name: "jsonrpc-line", summary: "one line on driverd's socket through the dispatcher, every method with params registered; every reply is JSON", run: jsonRPCLine),
        Target(name: "config-toml", summary: "driverd.toml through the TOML reader and the configuration's validation", run: configTOML),
        Target(name: "remote-config", summary: "a signed configuration document (or its payload) through decoding and the remote rules", run: remoteConfig),
        Target(name: "release-manifest", summary: "a release manifest through the release rules; a manifest they pass has chunks that add up to its size", run: releaseManifest),
        Target(name: "backend-push", summary: "a WebSocket message or push list from the backend, a pushed task's route polyline decoded", run: backendPush),
        Target(name: "kiosk-bridge", summary: "a frame from the kiosk page through the bridge's policy; every answer it makes is JSON", run: kioskBridge),
    ]

    public static func named(_ name: String) -> Target? { all.first { $0.name == name } }

    // MARK: The targets

    static func gpsdJSON(_ bytes: [UInt8]) {
        guard let fix = GPSDJSON.fix(bytes) else { return }
        var filter = FixFilter()
        var motion = MotionDetector()
        for _ in 0..<2 {
            if case .accept = filter.evaluate(fix) { _ = motion.observe(fix) }
        }
    }

    static func elm327Reply(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let command = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let raw = String(text.dropFirst(command.count))
        if case .frames(let frames) = ELMReply.parse(raw, command: command) {
            _ = OBDDecoding.decode(several: OBDPID.allCases, frames: frames)
            for pid in OBDPID.allCases { _ = OBDDecoding.decode(pid, frames: frames) }
            _ = OBDDecoding.supported(base: 0x00, frames: frames)
            _ = OBDDecoding.faults(frames: frames, pending: false)
        }
        _ = OBDDecoding.voltage(raw)
        _ = OBDDecoding.isCAN(protocolNumber: raw)
    }

    static func jsonRPCLine(_ bytes: [UInt8]) {
        guard let reply = blocking({ await dispatcher.handle(line: bytes, connection: connection) }) else { return }
        do {
            _ = try JSONParser.parse(reply)
        } catch {
            preconditionFailure("the dispatcher answered with a line that is not JSON: \(String(decoding: reply, as: UTF8.self))")
        }
    }

    static func configTOML(_ bytes: [UInt8]) {
        // A file TOML refuses: an answer (the error with its place), not a finding.
        guard let values = try? ConfigFile.parse(String(decoding: bytes, as: UTF8.self)) else { return }
        _ = DaemonConfig.parse(values)
    }

    static func remoteConfig(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let document = decoded(RemoteConfigDocument.self, data)
            ?? decoded(SignedConfig.self, data).flatMap({ Data(base64Encoded: $0.payload) }).flatMap({ decoded(RemoteConfigDocument.self, $0) })
        else { return }
        _ = RemoteConfigRules.check(document, running: 1, newest: 2, layers: ConfigLayers(file: [:]))
    }

    static func releaseManifest(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let manifest = decoded(ReleaseManifest.self, data)
            ?? decoded(SignedRelease.self, data).flatMap({ Data(base64Encoded: $0.payload) }).flatMap({ decoded(ReleaseManifest.self, $0) })
        else { return }
        _ = ReleaseRules.refusal(of: manifest, installed: (version: "0.1.0", architecture: "amd64"))
        guard ReleaseRules.problem(of: manifest) == nil else { return }
        // What the download does with a manifest the rules passed: every chunk's offset and length.
        var total = 0
        for index in manifest.chunks.indices {
            let length = manifest.length(ofChunk: index)
            precondition(length > 0 && manifest.offset(ofChunk: index) == total, "chunk \(index) of a manifest the rules passed")
            total += length
        }
        precondition(total == manifest.size, "the chunks of a manifest the rules passed add up to \(total), not \(manifest.size)")
    }

    static func backendPush(_ bytes: [UInt8]) {
        let data = Data(bytes)
        var pushes: [Push] = []
        if case .push(let push)? = decoded(WSServerMessage.self, data) { pushes.append(push) }
        if let list = decoded(PushList.self, data) { pushes += list.pushes }
        for push in pushes {
            if let task = push.task { _ = Polyline.decode(task.polyline) }
        }
    }

    static func kioskBridge(_ bytes: [UInt8]) {
        guard case .reply(let reply) = BridgePolicy().decide(bytes) else { return }
        do {
            _ = try JSONParser.parse(reply)
        } catch {
            preconditionFailure("the bridge answered with a frame that is not JSON: \(String(decoding: reply, as: UTF8.self))")
        }
    }

    /// `data` decoded as the daemon decodes it, or nil: most fuzzed inputs are not documents at all, and a refusal to
    /// decode is the parser's right answer (only a trap or a memory error is a finding).
    static func decoded<T: Decodable>(_ type: T.Type, _ data: Data) -> T? { try? Codec.decode(type, from: data) }

    // MARK: The dispatcher's table

    /// Every method that takes params, registered: the params are decoded as the daemon decodes them, then the
    /// handler declines (what a handler does is the owners' tests' business, not the parser's).
    static let dispatcher: RPCDispatcher = {
        var router = RPCRouter()
        func declining<Params, Result>(_ method: Method<Params, Result>) {
            router.register(method) { _, _ in throw APIError(.unavailable, "fuzzing: params decoded") }
        }
        declining(Methods.agentSetLogLevel)
        declining(Methods.sosRaise)
        declining(Methods.authLogin)
        declining(Methods.eventsAck)
        declining(Methods.routeResequence)
        declining(Methods.navLinks)
        declining(Methods.taskAccept)
        declining(Methods.taskDeliver)
        declining(Methods.taskFail)
        declining(Methods.podPhoto)
        declining(Methods.podOTP)
        declining(Methods.gpsRequestRate)
        declining(Methods.eventsSubscribe)
        declining(Methods.agentStatus)
        return RPCDispatcher(router: router, logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
    }()

    static let connection = RPCConnection(id: 1, peer: PeerCredentials(pid: 1, uid: 0, gid: 0, supplementaryGroups: []), mayMutate: true)

    /// Runs `work` on Swift's executor and waits for it on this thread (libFuzzer calls a target synchronously).
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let box = Mutex<T?>(nil)
        let done = Semaphore()
        Task {
            let value = await work()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}

/// A counting semaphore on a pthread condition (no libdispatch in these targets).
final class Semaphore: @unchecked Sendable {
    // The mutex and condition are only touched through pthread calls, which synchronise them.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var count = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func signal() {
        pthread_mutex_lock(&mutex)
        count += 1
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func wait() {
        pthread_mutex_lock(&mutex)
        while count == 0 { pthread_cond_wait(&condition, &mutex) }
        count -= 1
        pthread_mutex_unlock(&mutex)
    }
}
