/// Links that hand navigation to an app (the daemon never navigates itself).
public struct NavigationLinks: Codable, Sendable, Equatable {
    /// `google.navigation:q=lat,lng` (Android intent).
    public var google: String
    /// `https://www.google.com/maps/dir/?api=1&destination=lat,lng`.
    public var googleWeb: String
    /// `maps://?daddr=lat,lng`.
    public var apple: String
    /// `waze://?ll=lat,lng&navigate=yes`.
    public var waze: String
    /// RFC 5870: `geo:lat,lng`.
    public var geo: String
    public init(google: String, googleWeb: String, apple: String, waze: String, geo: String) {
        self.google = google
        self.googleWeb = googleWeb
        self.apple = apple
        self.waze = waze
        self.geo = geo
    }
}

/// Params of `nav.links`: a stop id, or the next stop.
public struct NavParams: Codable, Sendable, Equatable {
    public var stopId: String?
    public init(stopId: String? = nil) { self.stopId = stopId }
}

/// Result of `nav.links`.
public struct NavResult: Codable, Sendable, Equatable {
    public var stop: StopView
    public var links: NavigationLinks
    public init(stop: StopView, links: NavigationLinks) {
        self.stop = stop
        self.links = links
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl navigate [--stop STOP]`.
    ///
    /// Params: `{"stopId": "task-1001-dropoff"}` or none for the next stop. Result: `{"stop": {...}, "links": {...}}`
    /// with the links of `route.next`. The daemon never navigates; `driverctl navigate --open` hands a link to
    /// `xdg-open`.
    public static let navLinks = Method<NavParams, NavResult>("nav.links", mutating: false, screen: true)

    /// This file's methods, in `Methods.all`.
    static let nav: [MethodDescriptor] = [navLinks.descriptor]
}
