import BackendContract
import DispatchSimCore
import Hummingbird

/// The office's side: the fleet view of every unit's newest health report (`GET /api/v1/fleet/health`) and the page
/// an operator reads (`GET /fleet`). Open, like the dispatcher's `/sim/` API: the reference backend has no operators'
/// login.
struct FleetRoutes {
    let state: SimState

    func add(to router: Router<SimContext>) {
        router.get(RouterPath(stringLiteral: BackendPaths.fleetHealth)) { _, _ -> Response in
            try SimJSON.response(await state.read { world, now in world.fleetHealth(now: now) })
        }
        router.get("fleet") { _, _ -> Response in
            let page = await state.read { world, now in FleetPage.html(world.fleetHealth(now: now)) }
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
    }
}
