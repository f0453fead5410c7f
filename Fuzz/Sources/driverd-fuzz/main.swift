import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

/// The target this process fuzzes: `DRIVERD_FUZZ_TARGET` (one of `FuzzTargets.all`), read once.
let target: FuzzTargets.Target = {
    let name = getenv("DRIVERD_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTargets.named(name) else {
        let message = "DRIVERD_FUZZ_TARGET must name one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    target.run(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}

/// libFuzzer's driver, called from the entry point SwiftPM gives a debug executable (it renames `main` to
/// `<module>_main` so tests can link the module): libFuzzer's own `main` does just this.
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("driverd_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments, fuzz)
}
