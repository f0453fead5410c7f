import DriverAPI
import DriverDomain
import Testing

/// Every transition of the task state machine, and every refusal.
@Suite("Task workflow")
struct TaskWorkflowTests {
    /// The machine as a table: (from, action, POD captured) → to. Everything absent is refused.
    static let valid: [(TaskStatus, DriverAction, Bool, TaskStatus)] = [
        (.assigned, .accept, false, .accepted),
        (.accepted, .arrive, false, .arrivedAtStore),
        (.arrivedAtStore, .pickup, false, .pickedUp),
        (.pickedUp, .arrive, false, .arrivedAtDestination),
        (.arrivedAtDestination, .deliver, true, .delivered),
        (.arrivedAtDestination, .fail, false, .deliveryFailed),
        (.arrivedAtDestination, .fail, true, .deliveryFailed),
        (.deliveryFailed, .returnToVendor, false, .returnedToVendor),
    ]

    @Test("every status × action × POD: the table's transitions succeed, all others are refused")
    func exhaustive() {
        for status in TaskStatus.allCases {
            for action in DriverAction.allCases {
                for pod in [false, true] {
                    let result = TaskWorkflow.apply(action, to: status, podCaptured: pod)
                    let expected = Self.valid.first { $0.0 == status && $0.1 == action && ($0.2 == pod || $0.1 != .deliver) }
                    switch (result, expected) {
                    case (.success(let next), .some(let row)):
                        #expect(next == row.3, "\(status) \(action)")
                        #expect(TaskWorkflow.allowedActions(status, podCaptured: pod).contains(action))
                    case (.failure(let refusal), nil):
                        #expect(refusal.current == status && refusal.action == action)
                        #expect(refusal.allowed == TaskWorkflow.allowedActions(status, podCaptured: pod))
                        #expect(!refusal.allowed.contains(action))
                    default:
                        Issue.record("\(status) \(action) pod=\(pod): got \(result), expected \(String(describing: expected))")
                    }
                }
            }
        }
    }

    @Test("delivering without proof of delivery is refused with a reason that says so")
    func podRequired() throws {
        guard case .failure(let refusal) = TaskWorkflow.apply(.deliver, to: .arrivedAtDestination, podCaptured: false) else {
            Issue.record("deliver without POD must be refused")
            return
        }
        #expect(refusal.reason.contains("proof of delivery"))
        #expect(refusal.allowed == [.fail])
    }

    @Test("a refusal names the current status and the allowed actions")
    func refusalWording() {
        guard case .failure(let refusal) = TaskWorkflow.apply(.pickup, to: .assigned, podCaptured: false) else { return }
        #expect(refusal.description == "cannot pickup a task that is ASSIGNED; allowed now: accept")
        guard case .failure(let done) = TaskWorkflow.apply(.accept, to: .delivered, podCaptured: true) else { return }
        #expect(done.description.contains("allowed now: nothing (the task is DELIVERED)"))
    }

    @Test("backend validation: driver transitions and cancellation from any open status")
    func backendTransitions() {
        #expect(TaskWorkflow.isTransition(from: .assigned, to: .accepted))
        #expect(TaskWorkflow.isTransition(from: .arrivedAtDestination, to: .delivered))
        #expect(!TaskWorkflow.isTransition(from: .assigned, to: .pickedUp))
        #expect(!TaskWorkflow.isTransition(from: .delivered, to: .accepted))
        for status in TaskStatus.allCases {
            #expect(TaskWorkflow.isTransition(from: status, to: .cancelled) == !status.isTerminal)
        }
    }

    @Test("the primary action follows the journey")
    func primaryActions() {
        let journey: [(TaskStatus, Bool, PrimaryAction?)] = [
            (.assigned, false, .accept), (.accepted, false, .arrivedAtStore), (.arrivedAtStore, false, .pickedUp),
            (.pickedUp, false, .arrivedAtDestination), (.arrivedAtDestination, false, .capturePOD),
            (.arrivedAtDestination, true, .delivered), (.deliveryFailed, false, .returnToVendor),
            (.delivered, true, nil), (.returnedToVendor, false, nil), (.cancelled, false, nil),
        ]
        for (status, pod, expected) in journey {
            #expect(TaskWorkflow.primaryAction(status, podCaptured: pod) == expected, "\(status)")
        }
    }

    @Test("wire names are the contract's")
    func wireNames() {
        #expect(TaskStatus.allCases.map(\.rawValue) == [
            "ASSIGNED", "ACCEPTED", "ARRIVED_AT_STORE", "PICKED_UP", "ARRIVED_AT_DESTINATION", "DELIVERED",
            "DELIVERY_FAILED", "RETURNED_TO_VENDOR", "CANCELLED",
        ])
        #expect(FailureReason.allCases.map(\.rawValue) == ["CUSTOMER_UNAVAILABLE", "ADDRESS_NOT_FOUND", "REFUSED", "UNSAFE", "OTHER"])
    }
}
