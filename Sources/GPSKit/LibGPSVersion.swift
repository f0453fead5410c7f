import CGPS

/// The libgps API this build was compiled against, for diagnostics (gpsd 3.22 is API 11.0).
public enum LibGPSVersion {
    public static let api = "\(GPSD_API_MAJOR_VERSION).\(GPSD_API_MINOR_VERSION)"
}
