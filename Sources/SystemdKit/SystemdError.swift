#if canImport(Glibc)
import Glibc
#endif

/// A libsystemd call that failed, with the errno it returned (libsystemd returns `-errno`).
public struct SystemdError: Error, Sendable, Equatable, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    init(_ function: String, returned result: Int32) {
        self.function = function
        self.errno = -result
    }

    public var description: String { "\(function) failed: \(String(cString: strerror(errno)))" }

    /// Turns a libsystemd return value into a count or a thrown error: the one place C errors become Swift ones.
    static func check(_ function: String, _ result: Int32) throws(SystemdError) -> Int {
        guard result >= 0 else { throw SystemdError(function, returned: result) }
        return Int(result)
    }
}
