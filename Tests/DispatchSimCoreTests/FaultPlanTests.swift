import DispatchSimCore
import Foundation
import Testing

@Suite("Fault plan")
struct FaultPlanTests {
    @Test("the random number picks drop-before, drop-after, error or pass by the rates, only under the prefix")
    func decide() {
        var plan = FaultPlan(dropBeforeRate: 0.1, dropAfterRate: 0.2, errorRate: 0.3, errorStatus: 502)
        #expect(plan.decide(path: "/api/v1/rider/locations", random: 0.05) == .dropBefore)
        #expect(plan.decide(path: "/api/v1/rider/locations", random: 0.25) == .dropAfter)
        #expect(plan.decide(path: "/api/v1/rider/locations", random: 0.55) == .error(status: 502))
        #expect(plan.decide(path: "/api/v1/rider/locations", random: 0.65) == .pass)
        #expect(plan.decide(path: "/sim/stats", random: 0.0) == .pass)
    }

    @Test("a limit counts faults down, then everything passes")
    func limit() {
        var plan = FaultPlan(errorRate: 1, limit: 2)
        #expect(plan.decide(path: "/api/x", random: 0.5) == .error(status: 503))
        #expect(plan.decide(path: "/api/x", random: 0.5) == .error(status: 503))
        #expect(plan.decide(path: "/api/x", random: 0.5) == .pass)
        #expect(plan.limit == 0)
    }

    @Test("every field is optional in JSON; bad values are named")
    func validation() throws {
        let plan = try JSONDecoder().decode(FaultPlan.self, from: Data(#"{"errorRate":0.5}"#.utf8))
        #expect(plan == FaultPlan(errorRate: 0.5))
        #expect(plan.problems().isEmpty)
        let bad = FaultPlan(dropBeforeRate: 0.8, errorRate: 0.8, errorStatus: 404, latencyMs: -1, pathPrefix: "/sim/")
        let problems = bad.problems()
        #expect(problems.count == 4)
        #expect(problems.contains("the rates add up to more than 1"))
    }
}
