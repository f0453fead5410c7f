/// Result of `agent.describe`.
public struct AgentDescription: Codable, Sendable, Equatable {
    public var apiMajor: Int
    public var apiMinor: Int
    public var daemonVersion: String

    public init(apiMajor: Int, apiMinor: Int, daemonVersion: String) {
        self.apiMajor = apiMajor
        self.apiMinor = apiMinor
        self.daemonVersion = daemonVersion
    }
}

/// Params of `agent.setLogLevel`.
public struct SetLogLevelParams: Codable, Sendable, Equatable {
    public var level: LogLevel

    public init(level: LogLevel) { self.level = level }
}

/// Result of `agent.setLogLevel`.
public struct SetLogLevelResult: Codable, Sendable, Equatable {
    public var previous: LogLevel
    public var current: LogLevel

    public init(previous: LogLevel, current: LogLevel) {
        self.previous = previous
        self.current = current
    }
}

/// Log levels, as swift-log and syslog know them.
public enum LogLevel: String, Codable, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}

// MARK: Methods

extension Methods {
    public static let agentDescribe = Method<NoParams, AgentDescription>("agent.describe", mutating: false, screen: true)
    public static let agentStatus = Method<NoParams, AgentStatus>("agent.status", mutating: false, screen: true)
    public static let agentSetLogLevel = Method<SetLogLevelParams, SetLogLevelResult>(
        "agent.setLogLevel", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let agent: [MethodDescriptor] = [agentDescribe.descriptor, agentStatus.descriptor, agentSetLogLevel.descriptor]
}
