import JSONRPC

/// A part of the daemon that answers a namespace of the local API: it registers its own methods, and a namespace
/// has one owner (`MethodTable` records who registered what; RegistryDriftTests and docs/ARCHITECTURE.md's table
/// hold it: a method's file in DriverAPI, its owner here and its driverctl command share the namespace's name).
protocol MethodOwner {
    func register(in router: inout RPCRouter)
}

/// The router as the assembly builds it, with each method's owner.
struct MethodTable {
    private(set) var router = RPCRouter()
    /// Method name → the owner's type name.
    private(set) var owners: [String: String] = [:]

    mutating func add(_ owner: some MethodOwner) {
        let before = Set(router.methodNames)
        owner.register(in: &router)
        let name = String(describing: type(of: owner))
        for method in router.methodNames where !before.contains(method) { owners[method] = name }
    }
}
