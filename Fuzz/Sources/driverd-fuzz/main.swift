import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

/// The target this process fuzzes: `DRIVERD_FUZZ_TARGET` (one of `FuzzTargets.all`), read once.
let target: FuzzTargets.Target = {
    let name = getenv("DRIVERD_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTargets.named(name) else {
        fputs("DRIVERD_FUZZ_TARGET must name one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n", stderr)
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    target.run(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}
