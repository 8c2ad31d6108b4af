import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// The capabilities the shipped plugins provide (names fixed by the lead).
let shippedCapabilities = CapabilityCatalog([
    (.submitAction, "flowd.spool"), (.submitAction, "flowd.command"), (.submitAction, "flowd.webhook"),
    (.fieldValidator, "flowd.hostname"), (.fieldValidator, "flowd.username-available"),
    (.fieldValidator, "flowd.date-window"), (.optionsProvider, "flowd.weekdays"),
    (.optionsProvider, "flowd.time-slots"), (.prefillProvider, "flowd.real-name"),
])

/// A clock the tests set by hand.
struct TestClock: EngineClock {
    var now: Int64 = 1_700_000_000_000_000
    var today: CivilDate = CivilDate(iso: "2025-06-15")!
}

enum Fixture {
    /// The repository root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let exampleNames = ["onboarding", "consultation", "registration", "survey", "device-enrolment"]

    static func exampleBytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent("flows/\(name).json")))
    }

    /// One of the shipped example flows, linted against the shipped plugins.
    static func example(_ name: String) throws -> FlowDefinition {
        try FlowLoader.load(exampleBytes(name), fileName: "\(name).json", capabilities: shippedCapabilities)
    }

    /// A flow from inline JSON, any capabilities accepted.
    static func flow(_ json: String, file: String = "test.json") throws -> FlowDefinition {
        try FlowLoader.load(json, fileName: file, capabilities: .any)
    }

    /// The lint problems of an inline flow (empty when it loads).
    static func problems(_ json: String, capabilities: CapabilityCatalog = .any, limits: FlowLoadLimits = .default)
        -> [LintProblem]
    {
        do {
            _ = try FlowLoader.load(json, fileName: "bad.json", capabilities: capabilities, limits: limits)
            return []
        } catch {
            return error.problems
        }
    }

    /// A minimal valid flow around the given steps (a JSON array body).
    static func wrap(_ steps: String, extra: String = "") -> String {
        """
        {"format": 1, "id": "t", "title": "T", "steps": [\(steps)]\(extra.isEmpty ? "" : ", " + extra)}
        """
    }

    static func session(_ flow: FlowDefinition, locale: String = "en", clock: TestClock = TestClock(),
                        prefill: [String: AnswerValue] = [:], options: [String: [ChoiceOption]] = [:]) throws -> FlowSession {
        try FlowSession(flow: flow, id: "0123456789abcdef0123456789abcdef", owner: 1000, locale: locale, clock: clock,
                        prefill: prefill, dynamicOptions: options)
    }
}

/// Options a weekday provider might return.
let weekdayOptions = [
    ChoiceOption(id: "2025-06-16", label: "Monday 16 June"), ChoiceOption(id: "2025-06-17", label: "Tuesday 17 June"),
]
let slotOptions = [ChoiceOption(id: "09:00", label: "09:00"), ChoiceOption(id: "09:30", label: "09:30")]

extension FlowSession {
    /// Sets answers and expects no plugin checks.
    @discardableResult
    mutating func set(_ answers: [String: AnswerValue], now: Int64 = 1) throws -> FieldErrors {
        let r = try setAnswers(answers, now: now)
        #expect(r.checks.isEmpty, "unexpected plugin checks: \(r.checks)")
        return r.errors
    }

    /// Continue, expecting to move; returns the completion.
    @discardableResult
    mutating func next(now: Int64 = 2, sourceLocation: SourceLocation = #_sourceLocation) throws -> StepCompletion? {
        let outcome = try continueStep(now: now)
        guard case .moved(let c) = outcome else {
            Issue.record("expected to move on, got \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        return c
    }
}

/// Encodes a value as JSON text (Foundation, test side only).
func jsonText<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
