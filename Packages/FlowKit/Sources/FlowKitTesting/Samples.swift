// FlowKitTesting: what a plugin's unit tests hand its capabilities, made the
// way flowd makes them, so the tests need no flowd. Link it from test targets
// only; a plugin itself never needs it.
import FlowKit

extension PluginContext {
    /// A context as flowd passes one during a session: `locale` as a person
    /// chose it (`"de"`, `"pt-BR"`), the answers given so far (secure ones are
    /// never in a context), and the options the flow file gives where it names
    /// the capability. `timeLimit` sets the ``PluginContext/deadline`` that
    /// far from now, as flowd does when the plugin's code starts. What the
    /// plugin logs goes to `log`: pass a ``TestLog`` of your own to read it.
    public static func testing(
        flowID: String = "test-flow", sessionID: String = TestValues.sessionID, locale: String = "en",
        callerUID: UInt32 = TestValues.callerUID, answers: [String: AnswerValue] = [:],
        options: [String: JSONValue] = [:], stateDirectory: String = "/tmp", timeLimit: Duration? = nil,
        log: TestLog = TestLog()
    ) -> PluginContext {
        var context = PluginContext(
            flowID: flowID, sessionID: sessionID, locale: locale, callerUID: callerUID, answers: answers,
            options: options, stateDirectory: stateDirectory)
        context.deadline = timeLimit.map { ContinuousClock.now.advanced(by: $0) }
        context.log = PluginLogger(sink: log)
        return context
    }

    /// The context flowd passes to `describeRule`: no session id, no answers,
    /// the daemon's own uid (asked once per flow and language).
    public static func testingRuleDescription(
        flowID: String = "test-flow", locale: String = "en", options: [String: JSONValue] = [:],
        log: TestLog = TestLog()
    ) -> PluginContext {
        var context = PluginContext(
            flowID: flowID, sessionID: "", locale: locale, callerUID: 0, answers: [:], options: options,
            stateDirectory: "/tmp")
        context.log = PluginLogger(sink: log)
        return context
    }
}

extension FieldInfo {
    /// A field of `type` (`text`, `date`, `number`, …) labelled `label` in the
    /// session's language.
    public static func testing(_ id: String = "value", type: String = "text", label: String = "Value") -> FieldInfo {
        FieldInfo(id: id, type: type, label: label)
    }
}

extension StepInfo {
    /// A step holding `fields`.
    public static func testing(_ id: String = "step", title: String = "Step", fields: [FieldInfo]) -> StepInfo {
        StepInfo(id: id, title: title, fields: fields)
    }
}

extension Submission {
    /// A submission as flowd hands it to a submit action: `id` stays the
    /// same when the person retries (use it to make the action idempotent).
    public static func testing(
        id: String = TestValues.submissionID, flowID: String = "test-flow", locale: String = "en",
        ownerUID: UInt32 = TestValues.callerUID, answers: [String: AnswerValue] = [:],
        secureAnswers: [String: String] = [:], submittedAt: Int64 = TestValues.submittedAt
    ) -> Submission {
        Submission(
            id: id, flowID: flowID, sessionID: TestValues.sessionID, ownerUID: ownerUID, locale: locale,
            answers: answers, secureAnswers: secureAnswers, submittedAt: submittedAt)
    }
}

extension AnswerValue {
    /// A `date` field's answer as flowd stores it: `YYYY-MM-DD`.
    public static func date(_ date: CivilDate) -> AnswerValue { .text(date.description) }
    /// A `time` field's answer as flowd stores it: `HH:MM`.
    public static func time(_ time: CivilTime) -> AnswerValue { .text(time.description) }
}

/// The fixed values the samples use.
public enum TestValues {
    /// A session id: 32 lowercase hex characters.
    public static let sessionID = "0123456789abcdef0123456789abcdef"
    /// A submission id.
    public static let submissionID = "fedcba9876543210fedcba9876543210"
    /// A person's uid.
    public static let callerUID: UInt32 = 1000
    /// 2024-06-01T09:30:00Z in microseconds since the epoch.
    public static let submittedAt: Int64 = 1_717_234_200_000_000
    /// Locales to run a message test in: flowd's ten languages and one it
    /// has no strings for, so a plugin's fallback is tried too.
    public static let locales = ["en", "de", "fr", "es", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant", "sv"]
}
