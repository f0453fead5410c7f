import ArgumentParser
import DriverAPI
import FoundationEssentials

/// Options of the commands that act on a task: which one (default: the one the next stop belongs to).
struct TaskOption: ParsableArguments {
    @Option(name: .long, help: "The task (default: the task of the next stop).")
    var task: String?
}

/// `accept`, `arrive`, `pickup`, `deliver` and `return`: one call each, the task's new state printed.
protocol TaskActionCommand: ParsableCommand {
    static var method: Method<TaskParams, TaskView> { get }
    var options: GlobalOptions { get }
    var target: TaskOption { get }
}

extension TaskActionCommand {
    func run() throws {
        let task = try Session(options).call(Self.method, TaskParams(taskId: target.task))
        try Output(options).emit(task) { RouteFormatter.actionDone(task) }
    }
}

extension OutsideReason: ExpressibleByArgument {
    /// On the command line: customer-met-elsewhere, address-wrong, gps-poor, other.
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased().replacing("-", with: "_"))
    }

    public static var allValueStrings: [String] { allCases.map { $0.rawValue.lowercased().replacing("_", with: "-") } }
}

/// Why a delivery or failure happens beyond the stop's geofence (the daemon asks for it there).
struct OutsideOption: ParsableArguments {
    @Option(name: .long, help: "Why away from the stop: customer-met-elsewhere, address-wrong, gps-poor or other.")
    var outsideReason: OutsideReason?
}

struct Accept: TaskActionCommand {
    static let configuration = CommandConfiguration(abstract: "Accept a task.")
    static let method = Methods.taskAccept
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption
}

struct Arrive: TaskActionCommand {
    static let configuration = CommandConfiguration(abstract: "Arrived: at the store, or at the destination once picked up.")
    static let method = Methods.taskArrive
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption
}

struct Pickup: TaskActionCommand {
    static let configuration = CommandConfiguration(abstract: "Picked up the order at the store.")
    static let method = Methods.taskPickup
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption
}

struct Deliver: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delivered (after the proof of delivery: driverctl pod).")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption
    @OptionGroup var outside: OutsideOption

    func run() throws {
        let task = try Session(options).call(Methods.taskDeliver, TaskParams(taskId: target.task, outsideReason: outside.outsideReason))
        try Output(options).emit(task) { RouteFormatter.actionDone(task) }
    }
}

struct Return: TaskActionCommand {
    static let configuration = CommandConfiguration(abstract: "Returned the order to the vendor after a failed delivery.")
    static let method = Methods.taskReturnToVendor
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption
}

extension FailureReason: ExpressibleByArgument {
    /// On the command line: customer-unavailable, address-not-found, refused, unsafe, other.
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased().replacing("-", with: "_"))
    }

    public static var allValueStrings: [String] { allCases.map { $0.rawValue.lowercased().replacing("_", with: "-") } }
}

struct Fail: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The delivery failed (then: driverctl return).")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var target: TaskOption

    @Argument(help: "customer-unavailable, address-not-found, refused, unsafe or other.")
    var reason: FailureReason

    @Option(name: .long, help: "A note for dispatch (at most 500 characters).")
    var note: String?

    @OptionGroup var outside: OutsideOption

    func run() throws {
        let params = FailParams(taskId: target.task, reason: reason, note: note, outsideReason: outside.outsideReason)
        let task = try Session(options).call(Methods.taskFail, params)
        try Output(options).emit(task) { RouteFormatter.actionDone(task) }
    }
}

extension Driverctl {
    /// This file's commands, in the root's subcommands.
    static let taskCommands: [any ParsableCommand.Type] = [Accept.self, Arrive.self, Pickup.self, Deliver.self, Fail.self, Return.self]
}
