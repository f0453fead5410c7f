/// A method of the local API: its wire name, the types of its params and result, whether it changes state
/// (mutating methods are refused to peers outside the configured group), and whether the driver's screen may
/// call it (the kiosk forwards only those).
///
/// Both ends use the same descriptor, so a typo in a method name or a params type cannot compile.
public struct Method<Params: Codable & Sendable, Result: Codable & Sendable>: Sendable {
    public let name: String
    public let isMutating: Bool
    public let forScreen: Bool
    /// The API's minor version that added it (0: before versions were kept per method); `APIVersion.minor` follows.
    public let since: Int

    public init(_ name: String, mutating: Bool, screen: Bool = false, since: Int = 0) {
        self.name = name
        self.isMutating = mutating
        self.forScreen = screen
        self.since = since
    }

    public var descriptor: MethodDescriptor {
        MethodDescriptor(name: name, isMutating: isMutating, forScreen: forScreen, since: since)
    }
}

/// A method without its types: what registries and checks need.
public struct MethodDescriptor: Sendable, Hashable {
    public let name: String
    public let isMutating: Bool
    public let forScreen: Bool
    public let since: Int
}

/// Params of a method that takes none. On the wire: absent, `{}` or `[]`.
public struct NoParams: Codable, Sendable, Equatable {
    public init() {}
}

/// The methods of the local API, declared beside their types (`extension Methods` in each namespace's file, with
/// the list of that file's methods, `static let <namespace>: [MethodDescriptor]`).
///
/// `Methods.all` is every method once, derived at build time from those lists (the MethodList plugin): the daemon
/// registers a handler for each (a test holds the two equal), the kiosk forwards those marked for the screen. Each
/// is documented by the doc comment of its descriptor. A new method touches only its namespace's file here, a new
/// namespace only its new file.
public enum Methods {}
