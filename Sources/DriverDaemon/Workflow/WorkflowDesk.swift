import DriverAPI
import DriverDomain
import JSONRPC

/// The owner of the driver's workflow methods, `route.*`, `nav.links`, `task.*` and `pod.*`: the workflow actor
/// behind the safety gate (the actions that need the driver's attention wait while the vehicle moves).
struct WorkflowDesk: MethodOwner, Sendable {
    let workflow: Workflow
    let proofs: ProofOfDelivery
    let safety: Safety

    func register(in router: inout RPCRouter) {
        let workflow = workflow, proofs = proofs, safety = safety
        router.register(Methods.routeGet) { _, _ in await workflow.route() }
        router.register(Methods.routeNext) { _, _ in await workflow.next() }
        router.register(Methods.routeResequence) { params, _ in
            if params.confirm { try safety.require("a new stop order") }
            return try await workflow.resequence(params.order, confirm: params.confirm)
        }
        router.register(Methods.navLinks) { params, _ in try await workflow.navigation(stopId: params.stopId) }
        let actions: [(Method<TaskParams, TaskView>, DriverAction)] = [
            (Methods.taskAccept, .accept), (Methods.taskArrive, .arrive), (Methods.taskPickup, .pickup),
            (Methods.taskDeliver, .deliver), (Methods.taskReturnToVendor, .returnToVendor),
        ]
        for (method, action) in actions {
            router.register(method) { params, _ in
                if action == .deliver { try safety.require("delivering") }
                return try await workflow.act(action, taskId: params.taskId, outsideReason: params.outsideReason)
            }
        }
        router.register(Methods.taskFail) { params, _ in
            try safety.require("a failed delivery")
            return try await workflow.act(.fail, taskId: params.taskId, reason: params.reason, note: params.note, outsideReason: params.outsideReason)
        }
        router.register(Methods.podPhoto) { params, _ in
            try safety.require("the proof of delivery")
            return try await proofs.photo(taskId: params.taskId, path: params.path)
        }
        router.register(Methods.podOTP) { params, _ in
            try safety.require("the proof of delivery")
            return try await proofs.otp(taskId: params.taskId, otp: params.otp)
        }
    }
}
