import DriverAPI

extension NavigationLinks {
    /// Links to a destination for each navigation app the brief names (§3.4); coordinates to 1e-6 degrees
    /// (about 10 cm), in the "lat,lng" order every one of them takes.
    public static func to(lat: Double, lng: Double) -> NavigationLinks {
        let point = "\(format(lat)),\(format(lng))"
        return NavigationLinks(
            google: "google.navigation:q=\(point)",
            googleWeb: "https://www.google.com/maps/dir/?api=1&destination=\(point)",
            apple: "maps://?daddr=\(point)",
            waze: "waze://?ll=\(point)&navigate=yes",
            geo: "geo:\(point)")
    }

    private static func format(_ degrees: Double) -> String {
        let scaled = (degrees * 1e6).rounded() / 1e6
        var text = String(scaled)
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
