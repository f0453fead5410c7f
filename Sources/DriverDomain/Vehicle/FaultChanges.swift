import DriverAPI

/// What changed between the fault codes the backend was told of and those the vehicle reports now (pure). A code
/// is the pair of its name and whether it is pending: a pending code that becomes stored clears as pending and
/// appears as stored.
public struct FaultChanges: Sendable, Equatable {
    public var appeared: [VehicleFault]
    public var cleared: [VehicleFault]

    public var isEmpty: Bool { appeared.isEmpty && cleared.isEmpty }

    public init(reported: Set<VehicleFault>, current: Set<VehicleFault>) {
        let strip = { (fault: VehicleFault) in VehicleFault(code: fault.code, pending: fault.pending) }
        let before = Set(reported.map(strip)), now = Set(current.map(strip))
        let order = { (a: VehicleFault, b: VehicleFault) in (a.code, a.pending ? 1 : 0) < (b.code, b.pending ? 1 : 0) }
        appeared = now.subtracting(before).sorted(by: order)
        cleared = before.subtracting(now).sorted(by: order)
    }
}
