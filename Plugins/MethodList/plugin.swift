import Foundation
import PackagePlugin

/// `Methods.all`, derived at build time from DriverAPI's files (`scripts/method-list.py`): each namespace's file
/// declares its methods and their list, and that list is its registration. A hand-kept `all` was one more file to
/// touch for a new namespace, and one more place to forget.
@main
struct MethodList: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url).sorted { $0.path < $1.path }
        let script = context.package.directoryURL.appendingPathComponent("scripts/method-list.py")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Methods+all.swift")
        return [
            .buildCommand(
                displayName: "Deriving Methods.all from \(target.name)'s namespaces",
                executable: URL(fileURLWithPath: "/usr/bin/python3"),
                arguments: [script.path, output.path] + sources.map(\.path),
                inputFiles: [script] + sources,
                outputFiles: [output])
        ]
    }
}
