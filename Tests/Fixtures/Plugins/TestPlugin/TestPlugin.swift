// FixtureTestPlugin: well-behaved capabilities for the loader, the call path
// and the daemon's tests. Never installed.
import FlowKit
import Foundation

/// `test.even`: accepts an even integer; anything else gets a message.
struct EvenValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        switch value {
        case .integer(let i): return i % 2 == 0 ? nil : "\(field.label) must be even."
        case .number(let d): return d.truncatingRemainder(dividingBy: 2) == 0 ? nil : "\(field.label) must be even."
        case .text(let s): return Int(s).map { $0 % 2 == 0 } == true ? nil : "\(field.label) must be even."
        default: return "\(field.label) must be a number."
        }
    }
}

/// `test.sunday`: a validator written for FlowKit ABI 3 that warns. A date
/// on a Sunday of June 2030 (`2030-06-02`) is allowed with a warning; one in
/// the past (`2000-01-01`) is an error; anything else passes.
struct SundayValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        value.textValue == "2000-01-01" ? "That is in the past." : nil
    }

    func assess(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldAssessment {
        if let error = try await validate(value, field: field, context: context) { return .rejected(error) }
        guard value.textValue == "2030-06-02" else { return .accepted }
        return .warning(context.locale.hasPrefix("de")
            ? "Das ist ein Sonntag; da haben wir geschlossen." : "That is a Sunday; we are closed then.")
    }
}

/// `test.vat`: an EU VAT id, normalized (SDK 1.1): spaces and dots go,
/// letters are uppercased ("de 123.456.789" is stored as "DE123456789").
/// Anything that is not two letters and 8 to 12 digits or letters gets a
/// message from a compiled-in catalog (`de-CH` has its own word). Logs one
/// line per value it normalizes. `{"returns": "list"}` makes it return a
/// list (the wrong type for a text field), `{"returns": "padded"}` the
/// value with 40 more characters (too long for a field with `maxLength`),
/// `{"returns": "unsettled"}` a value that never settles (the cleaned id
/// in lower case when it was given in upper case, and back).
struct VATValidator: FieldValidator {
    static let notVAT = LocalizedMessage([
        "en": "{label} is not a VAT number, such as DE123456789.",
        "de": "{label} ist keine USt-IdNr., z. B. DE123456789.",
        "de-CH": "{label} ist keine MWST-Nummer, z. B. CHE123456789.",
    ])

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await review(value, field: field, context: context).assessment.rejection
    }

    func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview {
        let cleaned = (value.textValue ?? "").filter { $0 != " " && $0 != "." }.uppercased()
        let scalars = Array(cleaned.unicodeScalars)
        guard scalars.count >= 10, scalars.count <= 14, scalars.prefix(2).allSatisfy({ ("A"..."Z").contains($0) }),
            scalars.dropFirst(2).allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else { return FieldReview(.rejected(Self.notVAT(context.locale, ["label": field.label]))) }
        context.log.info("normalized a VAT id", ["country": .text(String(cleaned.prefix(2))), "length": .integer(Int64(scalars.count))])
        switch context.options["returns"]?.stringValue {
        case "list": return .accepted(normalizedTo: .list([cleaned]))
        case "padded": return .accepted(normalizedTo: .text(cleaned + String(repeating: "0", count: 40)))
        case "unsettled": return .accepted(normalizedTo: .text(value.textValue == cleaned ? cleaned.lowercased() : cleaned))
        default: return .accepted(normalizedTo: .text(cleaned))
        }
    }
}

/// `test.chatty`: logs `{"lines": N}` info lines (default 1) with a
/// `line` field, then accepts. With `{"echo": true}` it also logs the
/// value it was given, as a careless plugin might: flowd must blank it out
/// when the field is secure.
struct ChattyValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let lines = context.options["lines"]?.intValue ?? 1
        for line in 0..<lines { context.log.info("chatty line \(line)", ["line": .integer(Int64(line))]) }
        if context.options["echo"] == .bool(true) {
            context.log.warning("the value was \(value.textValue ?? "")", ["value": .text(value.textValue ?? "")])
        }
        return nil
    }
}

/// `test.busy-step`: a step validator that only warns, on the step and on
/// its first field.
struct BusyStepValidator: StepValidator {
    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        [ValidationIssue(field: nil, message: "We are busy that week.", level: .warning),
         ValidationIssue(field: step.fields.first?.id, message: "Check this one.", level: .warning)]
    }
}

/// `test.same-answers`: the step's first two fields must hold the same answer.
struct SameAnswersValidator: StepValidator {
    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        guard step.fields.count >= 2 else { return [] }
        let first = context.answers[step.fields[0].id]
        let second = context.answers[step.fields[1].id]
        return first == second ? [] : [ValidationIssue(field: step.fields[1].id, message: "These must match.")]
    }
}

/// `test.slow-submit`: waits `{"seconds": N}` (cooperatively, so it can be
/// cancelled), then succeeds with a receipt naming the submission.
struct SlowSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let seconds = context.options["seconds"]?.numberValue ?? 1
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return SubmitReceipt(["reference": .string(submission.id)])
    }
}

/// `test.echo-submit`: succeeds at once; the receipt carries the answer
/// count, and the entries of `{"receipt": {…}}` as they are given; with
/// `{"reportDeadline": true}`, the seconds left of the call as `timeLeft`.
struct EchoSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        var receipt: [String: JSONValue] = [
            "reference": .string(submission.id),
            "answers": .number(Double(submission.answers.count)),
            "flow": .string(context.flowID),
        ]
        receipt.merge(context.options["receipt"]?.objectValue ?? [:]) { _, given in given }
        if context.options["reportDeadline"] == .bool(true) {
            // Seconds left of the call when the action ran; null without a deadline.
            receipt["timeLeft"] = context.secondsRemaining.map(JSONValue.number) ?? .null
        }
        return SubmitReceipt(receipt)
    }
}

/// `test.fail-submit`: throws a `LocalizedFailure` whose message is in the
/// context's locale (`{"message": "…"}` overrides it).
struct FailSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        if let message = context.options["message"]?.stringValue { throw LocalizedFailure(message) }
        throw LocalizedFailure(context.locale.hasPrefix("de") ? "Der Kalender ist voll." : "The calendar is full.")
    }
}

/// `test.opaque-fail-submit`: throws an error that carries no message for people.
struct OpaqueFailSubmit: SubmitAction {
    struct Opaque: Error {}
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        throw Opaque()
    }
}

/// `test.localized-error-submit`: throws a Foundation `LocalizedError`.
struct LocalizedErrorSubmit: SubmitAction {
    struct Described: LocalizedError {
        var errorDescription: String? { "The room is already booked." }
    }
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        throw Described()
    }
}

/// `test.options`: three fixed options, labels in English or German.
struct TestOptions: OptionsProvider {
    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        let german = context.locale.hasPrefix("de")
        return [
            ChoiceOption(id: "red", label: german ? "Rot" : "Red"),
            ChoiceOption(id: "green", label: german ? "Grün" : "Green", icon: "emblem-default"),
            ChoiceOption(id: "blue", label: german ? "Blau" : "Blue"),
        ]
    }
}

/// `test.prefill`: the caller's uid as text (`{"value": "…"}` overrides it).
struct TestPrefill: PrefillProvider {
    func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue? {
        if let value = context.options["value"]?.stringValue { return .text(value) }
        return .text("uid \(context.callerUID)")
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "test", version: "1.0",
        capabilities: [
            .fieldValidator("test.even", EvenValidator()),
            .fieldValidator("test.vat", VATValidator()),
            .fieldValidator("test.chatty", ChattyValidator()),
            .stepValidator("test.same-answers", SameAnswersValidator()),
            .fieldValidator("test.sunday", SundayValidator()),
            .stepValidator("test.busy-step", BusyStepValidator()),
            .submitAction("test.slow-submit", SlowSubmit()),
            .submitAction("test.echo-submit", EchoSubmit()),
            .submitAction("test.fail-submit", FailSubmit()),
            .submitAction("test.opaque-fail-submit", OpaqueFailSubmit()),
            .submitAction("test.localized-error-submit", LocalizedErrorSubmit()),
            .optionsProvider("test.options", TestOptions()),
            .prefillProvider("test.prefill", TestPrefill()),
        ]
    ).exportRetained()
}
