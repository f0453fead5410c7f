/// The version of the local JSON-RPC API.
///
/// The major number changes when a method, field or error is removed or changes meaning; the minor number
/// when something is added. A front end warns when its major number differs from the daemon's.
public enum APIVersion {
    public static let major = 1
    /// A new method raises it through its descriptor's `since`; a field or event added to what exists, here.
    public static let minor = max(18, Methods.all.map(\.since).max() ?? 0)
}
