import BackendContract

/// What an owner hears from the uplink, declared once in its `attach(to:)` beside the outbox kinds it sends: the pushes
/// of the kinds it names, the link's return (the first success after a start or after a minute or more down), and
/// another driver's login before it is kept (a throw refuses that login: no driver may see another's orders).
struct UplinkSubscription: Sendable {
    var pushes: Set<PushKind> = []
    var pushed: @Sendable (Push) async -> Void = { _ in }
    var linkRestored: (@Sendable () async -> Void)?
    var driverChanging: (@Sendable () async throws -> Void)?

    /// Every kind (the front ends hear them all).
    static var everyPush: Set<PushKind> { Set(PushKind.allCases) }
}
