#if canImport(Glibc)
import Glibc
#endif

func printError(_ message: String) {
    var bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
