/// What "installed" means, for driverd (reading dpkg's status file) and driverd-update (asking dpkg-query) alike.
public enum DpkgStatus {
    /// dpkg's `Status` field (`want flag status`): the package is wanted, not broken, and unpacked or further
    /// (`installed`, or `unpacked`, `half-configured`, `triggers-*` while dpkg runs: driverd starts from a postinst).
    /// Removed, half-installed (its files may be missing) and config-files-only packages are not installed.
    public static func isInstalled(_ status: String) -> Bool {
        let words = status.split(separator: " ")
        guard words.count == 3, words[0] == "install" || words[0] == "hold", words[1] == "ok" else { return false }
        return ["installed", "unpacked", "half-configured", "triggers-awaited", "triggers-pending"].contains(words[2])
    }
}
