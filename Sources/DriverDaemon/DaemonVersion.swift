/// The daemon's release version (Debian package version without the revision).
public enum DaemonVersion {
    public static let current = "0.1.0"
}
