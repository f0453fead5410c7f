// swift-tools-version: 6.1
// libFuzzer's binary over driverd's parsers of outside input (Sources/FuzzTargets). A package of its own, as
// swift-protobuf's FuzzTesting: its program has no main (libFuzzer's is linked in), so it cannot be a product of the
// main package. Built by `make fuzz` with -sanitize=fuzzer,address -parse-as-library.
import PackageDescription

let package = Package(
    name: "driverd-fuzz",
    dependencies: [.package(name: "driverd", path: "..")],
    targets: [
        .executableTarget(name: "driverd-fuzz", dependencies: [.product(name: "FuzzTargets", package: "driverd")]),
    ],
    swiftLanguageModes: [.v6]
)
