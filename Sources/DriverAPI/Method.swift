/// A method of the local API: its wire name, the types of its params and result, and whether it changes
/// state (mutating methods are refused to peers outside the configured group).
///
/// Both ends use the same descriptor, so a typo in a method name or a params type cannot compile.
public struct Method<Params: Codable & Sendable, Result: Codable & Sendable>: Sendable {
    public let name: String
    public let isMutating: Bool

    public init(_ name: String, mutating: Bool) {
        self.name = name
        self.isMutating = mutating
    }
}

/// Params of a method that takes none. On the wire: absent, `{}` or `[]`.
public struct NoParams: Codable, Sendable, Equatable {
    public init() {}
}

/// Every method of the local API. `docs/API.md` documents each one; a test keeps the two in step.
public enum Methods {
    public static let agentDescribe = Method<NoParams, AgentDescription>("agent.describe", mutating: false)
    public static let agentStatus = Method<NoParams, AgentStatus>("agent.status", mutating: false)
    public static let agentSetLogLevel = Method<SetLogLevelParams, SetLogLevelResult>(
        "agent.setLogLevel", mutating: true)

    public static let gpsStatus = Method<NoParams, GPSStatus>("gps.status", mutating: false)
    /// The latest fix; `unavailable` (1002) before the first.
    public static let gpsFix = Method<NoParams, Fix>("gps.fix", mutating: false)
    public static let gpsRequestRate = Method<RequestRateParams, RequestRateResult>("gps.requestRate", mutating: true)
    public static let eventsSubscribe = Method<SubscribeParams, SubscribeResult>("events.subscribe", mutating: false)

    public static let outboxStatus = Method<NoParams, OutboxStatus>("outbox.status", mutating: false)
    /// Sends what waits now (overriding a backoff) and answers once that attempt is over.
    public static let outboxFlush = Method<NoParams, OutboxStatus>("outbox.flush", mutating: true)
    public static let authLogin = Method<LoginParams, LoginResult>("auth.login", mutating: true)

    /// Every name, for documentation checks and `method not found` hints.
    public static let allNames: [String] = [
        agentDescribe.name, agentStatus.name, agentSetLogLevel.name, gpsStatus.name, gpsFix.name,
        gpsRequestRate.name, eventsSubscribe.name, outboxStatus.name, outboxFlush.name, authLogin.name,
    ]
}
