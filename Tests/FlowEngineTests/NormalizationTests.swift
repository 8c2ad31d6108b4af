import FlowKit
import Synchronization
import Testing

@testable import FlowEngine

/// A validator's normalized value (SDK 1.1) in the engine: stored in place
/// of the checked one when the field can take it, refused (a failed check,
/// reported) when it cannot. The same through flowd: FlowDaemonTests'
/// PluginSDKTests.
@Suite struct NormalizationTests {
    /// Cleans `ada_x` to `adax`, returns a list for `list-me` and `ab` (too
    /// short for the field) for `shorten`; hears the refusals.
    final class Normalizer: PluginValidating {
        let refusals = Mutex<[String]>([])

        func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
            -> FieldAssessment
        { .accepted }

        func reviewField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
            -> FieldReview
        {
            switch value.textValue {
            case "ada_x": return .accepted(normalizedTo: .text("adax"))
            case "list-me": return .accepted(normalizedTo: .list(["list-me"]))
            case "shorten": return .accepted(normalizedTo: .text("ab"))
            case "taken": return FieldReview(.rejected("That name is taken."), normalizedValue: .text("other"))
            default: return FieldReview(.accepted)
            }
        }

        func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] { [] }

        func normalizationRefused(_ name: String, field: FieldInfo, context: PluginContext, problem: NormalizationRefused) {
            refusals.withLock { $0.append("\(name) on \(field.id): \(problem)") }
        }
    }

    func registration() throws -> FlowSession { try Fixture.session(Fixture.example("registration")) }

    @Test("a normalized value is stored instead, as an answer change")
    func storedInstead() async throws {
        let normalizer = Normalizer()
        var s = try registration()
        let before = s.record.revision
        #expect(try await s.setAnswers(["username": .text("ada_x")], now: 1, validating: normalizer) == [:])
        #expect(s.answersOnPath(includeSecure: false)["username"] == .text("adax"))
        #expect(s.record.revision == before &+ 2, "the normalization is a change of its own")
        #expect(normalizer.refusals.withLock { $0 }.isEmpty)
        // Continue does not ask again about the cleaned value.
        _ = try await s.setAnswers(["email": .text("a@b.example")], now: 2, validating: normalizer)
        guard case .moved = try await s.continueStep(now: 3, validating: normalizer) else {
            Issue.record("did not move")
            return
        }
    }

    @Test("a normalized value of the wrong type, or one that breaks the field's rules, fails the check and is reported")
    func refused() async throws {
        let normalizer = Normalizer()
        var s = try registration()
        #expect(try await s.setAnswers(["username": .text("list-me")], now: 1, validating: normalizer)
            == ["username": "Couldn't check this value."])
        #expect(s.answersOnPath(includeSecure: false)["username"] == .text("list-me"))
        #expect(try await s.setAnswers(["username": .text("shorten")], now: 2, validating: normalizer)
            == ["username": "Couldn't check this value."])
        #expect(s.answersOnPath(includeSecure: false)["username"] == .text("shorten"))
        let refusals = normalizer.refusals.withLock { $0 }
        #expect(refusals.count == 2, "\(refusals)")
        #expect(refusals.first?.contains("does not fit the field") == true, "\(refusals)")
        #expect(refusals.last?.contains("breaks the field's own rules") == true, "\(refusals)")
        #expect(!refusals.contains { $0.contains("shorten") || $0.contains("\"ab\"") }, "the value is never in the report")
        // A rejection's normalized value is ignored.
        #expect(try await s.setAnswers(["username": .text("taken")], now: 3, validating: normalizer)
            == ["username": "That name is taken."])
        #expect(s.answersOnPath(includeSecure: false)["username"] == .text("taken"))
    }
}
