import DriverAPI
import DriverDomain
import Testing

/// What becomes of a queued item after an attempt: one row per category and answer.
@Suite("Outbox outcome policy")
struct OutboxOutcomePolicyTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let answer: OutboxOutcomePolicy.Answer
        let category: OutboxCategory
        let target: TaskStatus?
        let decision: OutboxOutcomePolicy.Decision
        var testDescription: String { "\(answer) of a \(category) (to \(target?.rawValue ?? "-")) → \(decision)" }
    }

    static let rows: [Row] = [
        // Accepted: acknowledged, with the status the backend names.
        Row(answer: .accepted(applied: .accepted), category: .transition, target: .accepted, decision: .acknowledge(applied: .accepted)),
        Row(answer: .accepted(applied: nil), category: .proof, target: nil, decision: .acknowledge(applied: nil)),
        Row(answer: .accepted(applied: nil), category: .alert, target: nil, decision: .acknowledge(applied: nil)),
        Row(answer: .accepted(applied: nil), category: .activity, target: nil, decision: .acknowledge(applied: nil)),
        Row(answer: .accepted(applied: nil), category: .routeChange, target: nil, decision: .acknowledge(applied: nil)),
        // Not delivered (no answer, 5xx, 401): tried again, whatever it is.
        Row(answer: .notDelivered, category: .transition, target: .accepted, decision: .retry),
        Row(answer: .notDelivered, category: .alert, target: nil, decision: .retry),
        Row(answer: .notDelivered, category: .routeChange, target: nil, decision: .retry),
        Row(answer: .notDelivered, category: .proof, target: nil, decision: .retry),
        Row(answer: .notDelivered, category: .activity, target: nil, decision: .retry),
        // Refused: a dead letter, except an SOS (never given up) and the unit's own change coming back.
        Row(answer: .refused(backendStatus: .assigned), category: .transition, target: .accepted, decision: .deadLetter),
        Row(answer: .refused(backendStatus: .cancelled), category: .transition, target: .pickedUp, decision: .deadLetter),
        Row(answer: .refused(backendStatus: nil), category: .transition, target: .accepted, decision: .deadLetter),
        Row(answer: .refused(backendStatus: .accepted), category: .transition, target: .accepted, decision: .acknowledge(applied: .accepted)),
        Row(answer: .refused(backendStatus: .pickedUp), category: .transition, target: .arrivedAtStore, decision: .acknowledge(applied: .pickedUp)),
        Row(answer: .refused(backendStatus: .delivered), category: .proof, target: nil, decision: .deadLetter),
        Row(answer: .refused(backendStatus: nil), category: .routeChange, target: nil, decision: .deadLetter),
        Row(answer: .refused(backendStatus: nil), category: .activity, target: nil, decision: .deadLetter),
        Row(answer: .refused(backendStatus: nil), category: .alert, target: nil, decision: .retryRefused),
    ]

    @Test("each answer of each category", arguments: rows)
    func decides(_ row: Row) {
        #expect(OutboxOutcomePolicy.decide(row.answer, category: row.category, target: row.target) == row.decision)
    }

    @Test("every category has a row for each kind of answer")
    func everyCategory() {
        for category in OutboxCategory.allCases {
            let answers = Self.rows.filter { $0.category == category }.map(\.answer)
            #expect(answers.contains { if case .accepted = $0 { true } else { false } }, "\(category) accepted")
            #expect(answers.contains { if case .refused = $0 { true } else { false } }, "\(category) refused")
            #expect(answers.contains(.notDelivered), "\(category) not delivered")
        }
    }
}
