#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock seconds since 1970, for record stamps.
enum WallClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
