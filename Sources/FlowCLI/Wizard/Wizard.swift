import DBus
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol
import FlowdSystem

/// The interactive wizard of `flowctl run` and `flowctl resume`: one step at a
/// time with its progress line, a prompt per field by type, the daemon's
/// errors right under the field, Back, Review with Edit, and Submit.
///
/// It holds no state of its own beyond the screen: every step is read back
/// from the daemon, so leaving at any point (Ctrl-C, `:quit`, the end of the
/// input) leaves a session that `resume` picks up exactly where it was.
final class Wizard: Sendable {
    private let calls: FlowdCalls
    private let session: String
    private let title: String
    private let input: any LineSource
    private let output: any TextSink
    private let style: Style
    private let spinner: (sink: any TextSink, fd: Int32?)?
    private let resumeCommand: String
    /// The session's language, for the wizard's own strings.
    let locale: String

    /// What one page of the wizard ended with.
    private enum Outcome {
        /// Read the current step again and go on from there.
        case next
        /// `:quit` or `q`.
        case quit
        /// Standard input ended.
        case ended
    }

    /// What a field prompt ended with.
    private enum FieldOutcome {
        case answered, back, quit, ended
    }

    init(
        calls: FlowdCalls, session: String, title: String, locale: String, input: any LineSource,
        output: any TextSink, style: Style, spinner: (any TextSink, Int32?)?, resumeCommand: String
    ) {
        self.calls = calls
        self.session = session
        self.title = title
        self.locale = locale
        self.input = input
        self.output = output
        self.style = style
        self.spinner = spinner.map { (sink: $0.0, fd: $0.1) }
        self.resumeCommand = resumeCommand
    }

    /// "Session … is saved. Resume it with: flowctl resume …" in the session's language.
    var savedMessage: String {
        WizardText.saved.text(locale, ["id": session, "command": resumeCommand])
    }

    private func say(_ text: String) { output.write(text) }

    private func call<T: Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(CLIError) -> T {
        try calls.call(body)
    }

    private func spinning<T, E: Error>(_ message: String, _ body: () throws(E) -> T) throws(E) -> T {
        guard let spinner else { return try body() }
        return try Spinner.during(message, enabled: true, sink: spinner.sink, fd: spinner.fd, body)
    }

    /// Runs the wizard to the end: 0 once submitted, 0 after `:quit` (the
    /// session is kept), 1 when the input ends first.
    func run() throws(CLIError) -> ExitCode {
        say(style.bold(title) + "\n" + style.dim(WizardText.intro.text(locale)) + "\n")
        let properties = try call { [session] s async throws(FlowClientError) in try await s.properties(session) }
        if properties.state == .failed, !properties.lastError.isEmpty {
            say("\n" + style.red("✗ " + properties.lastError) + "\n")
        }
        while true {
            let state = try call { [session] s async throws(FlowClientError) in try await s.properties(session) }.state
            if state == .submitting {
                try waitForSubmit()
                continue
            }
            let step = try call { [session] s async throws(FlowClientError) in try await s.step(session) }
            let outcome: Outcome
            switch step.kind {
            case .complete:
                say("\n" + style.green("✓ " + step.title) + "\n")
                if !step.body.isEmpty { say(step.body + "\n") }
                return .success
            case .review:
                outcome = try reviewPage(step)
            default:
                outcome = try stepPage(step)
            }
            switch outcome {
            case .next: continue
            case .quit:
                say("\n" + savedMessage + "\n")
                return .success
            case .ended:
                say("\n" + WizardText.inputEnded.text(locale) + " " + savedMessage + "\n")
                return .failure
            }
        }
    }

    private func waitForSubmit() throws(CLIError) {
        say(style.yellow(WizardText.waiting.text(locale)) + "\n")
        try spinning(Strings.builtin.text(.submitting, locale: locale)) { () throws(CLIError) in
            while try call({ [session] s async throws(FlowClientError) in try await s.properties(session) }).state == .submitting {
                MonotonicClock.sleep(for: .milliseconds(300))
            }
        }
    }

    // MARK: form and content steps

    private func stepPage(_ first: StepPage) throws(CLIError) -> Outcome {
        say("\n" + Render.progress(first, locale: locale, style: style))
        if !first.description.isEmpty { say(style.dim(first.description) + "\n") }
        if !first.body.isEmpty { say("\n" + first.body + "\n") }
        if !first.error.isEmpty { say(style.red("✗ " + first.error) + "\n") }
        if !first.warning.isEmpty { say(style.yellow("! " + first.warning) + "\n") }

        var step = first
        // Fields already answered (after Back, Edit or a resume) are shown,
        // not asked again; "e" asks them all. Computed fields are never asked.
        let askable = step.fields.filter { $0.type != .computed }
        var toAsk = askable.filter { !$0.isSet || !$0.error.isEmpty }
        if toAsk.count < askable.count { say("\n") }
        for field in step.fields where !toAsk.contains(field) && field.type != .computed {
            let shown = currentAnswer(field, choices: choiceList(field),
                                      yes: Strings.builtin.text(.yes, locale: locale), no: Strings.builtin.text(.no, locale: locale))
            say(style.bold(field.label.isEmpty ? field.id : field.label) + ": " + (shown ?? "") + "\n")
        }
        while true {
            switch try askFields(toAsk, step: &step) {
            case .answered: break
            case .back:
                if step.canGoBack {
                    try call { [session] s async throws(FlowClientError) in try await s.back(session) }
                    return .next
                }
                say(style.yellow(WizardText.firstStep.text(locale)) + "\n")
                return .next
            case .quit: return .quit
            case .ended: return .ended
            }
            step = try call { [session] s async throws(FlowClientError) in try await s.step(session) }
            // What flowd worked out from the answers: "Estimated price: 1,440 €".
            for field in step.fields where field.type == .computed && !field.display.isEmpty {
                say(style.bold(field.label) + ": " + field.display + "\n")
            }

            // The actions: Continue (Enter), Back, change the answers, Quit.
            var actions = ["Enter: " + step.continueLabel]
            if step.canGoBack { actions.append("b: " + step.backLabel) }
            if !step.fields.isEmpty { actions.append("e: " + WizardText.change.text(locale)) }
            actions.append("q: " + WizardText.quit.text(locale))
            say("\n" + style.dim(actions.joined(separator: " · ")) + "\n")
            var choice: String?
            while choice == nil {
                say(style.bold("> "))
                guard let line = try input.readLine(echo: true) else { return .ended }
                let word = line.trimmed.lowercased()
                switch word {
                case "", "b", "e", "q", ":back", ":quit": choice = word
                default: say(style.yellow(actions.joined(separator: " · ")) + "\n")
                }
            }
            switch choice {
            case "b", ":back":
                guard step.canGoBack else {
                    say(style.yellow(WizardText.firstStep.text(locale)) + "\n")
                    continue
                }
                try call { [session] s async throws(FlowClientError) in try await s.back(session) }
                return .next
            case "e":
                toAsk = step.fields.filter { $0.type != .computed }
                continue
            case "q", ":quit":
                return .quit
            default:
                break
            }

            let errors: [String: String]
            do {
                errors = try spinning(step.continueLabel + "…") { () throws(FlowClientError) in
                    try calls.request { [session] s async throws(FlowClientError) in try await s.continueStep(session) }
                }
            } catch {
                switch error.flowdName {
                case .submitFailed?, .timeout?, .cancelled?, .validationFailed?, .invalidState?:
                    say(style.red("✗ " + error.message) + "\n")
                    return .next
                default:
                    throw CLIError(error, bus: calls.bus)
                }
            }
            if errors.isEmpty { return .next }

            // Stayed: show each error under its field's name, then ask those fields again.
            step = try call { [session] s async throws(FlowClientError) in try await s.step(session) }
            say("\n")
            if let stepError = errors[""] { say(style.red("✗ " + stepError) + "\n") }
            for field in step.fields {
                if let message = errors[field.id] ?? errors[field.id + ".other"] {
                    say(style.bold(field.label) + ": " + style.red(message) + "\n")
                }
            }
            let named = step.fields.filter { errors[$0.id] != nil || errors[$0.id + ".other"] != nil }
            toAsk = (named.isEmpty ? step.fields : named).filter { $0.type != .computed }
        }
    }

    /// Asks `fields` in order. After each answer the step is read again, as
    /// a window would: a field the answer shows (`visibleIf`) is asked next,
    /// one it hides is not asked any more, and a warning is said under the
    /// field (it never stops the person).
    private func askFields(_ fields: [StepField], step: inout StepPage) throws(CLIError) -> FieldOutcome {
        var queue = fields.map(\.id)
        var asked: Set<String> = []
        while !queue.isEmpty {
            let id = queue.removeFirst()
            guard let field = step.field(id) else { continue }  // hidden by an earlier answer
            asked.insert(id)
            let outcome = try ask(field, step: step)
            guard case .answered = outcome else { return outcome }
            let before = Set(step.fields.map(\.id))
            step = try call { [session] s async throws(FlowClientError) in try await s.step(session) }
            if let warning = step.field(id)?.warning, !warning.isEmpty { say(style.yellow("  ! " + warning) + "\n") }
            let appeared = step.fields.filter { $0.type != .computed && !before.contains($0.id) && !asked.contains($0.id) }
            queue = appeared.map(\.id) + queue
        }
        return .answered
    }

    /// Asks one field until the daemon accepts the answer (or the person
    /// keeps the current one, goes back or quits).
    private func ask(_ field: StepField, step: StepPage) throws(CLIError) -> FieldOutcome {
        say("\n" + style.bold(field.label.isEmpty ? field.id : field.label) + (field.required ? " *" : "") + "\n")
        if !field.help.isEmpty { say(style.dim(field.help) + "\n") }
        if !field.hint.isEmpty { say(style.dim(field.hint) + "\n") }
        let choices = choiceList(field)
        for (number, option) in choices.enumerated() {
            say("  " + style.cyan("\(number + 1))") + " " + option.label + "\n")
        }
        let rules = FieldRules.describe(field, locale: locale)
        if !rules.isEmpty && field.type != .toggle { say(style.dim(rules) + "\n") }
        if !field.error.isEmpty { say(style.red("  ✗ " + field.error) + "\n") }

        while true {
            let promptText = prompt(for: field, choices: choices)
            guard let line = try input.readLine(echo: !field.isSecure, prompt: { say(promptText) }) else { return .ended }
            let text = field.isSecure ? line : line.trimmed
            switch text {
            case ":back", ":b": return .back
            case ":quit", ":q": return .quit
            default: break
            }
            var answers: [String: DBusValue]
            if text.isEmpty {
                // Enter keeps an answer. Without one, a required field asks the
                // daemon, which says why it cannot stay empty; the engine takes
                // no empty value for numbers and toggles, so those wait for
                // Continue to say it.
                if field.isSet || !field.required || field.type == .number || field.type == .toggle {
                    return .answered
                }
                answers = [field.id: field.type == .multichoice ? .strings([]) : .string("")]
            } else if text == ":clear" {
                answers = [field.id: field.type == .multichoice ? .strings([]) : .string("")]
            } else {
                switch interpret(text, field: field, choices: choices) {
                case .failure(let problem):
                    say(style.red("  ✗ " + problem.message) + "\n")
                    continue
                case .success(let value):
                    answers = [field.id: value]
                }
                if answers[field.id]?.string == "other" {
                    say(style.bold(field.label(ofOption: "other") ?? "Other") + "\n")
                    say(style.bold("> "))
                    guard let other = try input.readLine(echo: true) else { return .ended }
                    answers[field.id + ".other"] = .string(other.trimmed)
                }
            }
            let errors: [String: String]
            do {
                let typed = answers
                errors = try calls.request { [session] s async throws(FlowClientError) in try await s.setAnswers(session, typed) }
            } catch where error.flowdName == .invalidArgs || error.flowdName == .limitExceeded {
                // The daemon refused the value outright: say so and ask again.
                say(style.red("  ✗ " + error.message) + "\n")
                continue
            } catch {
                throw CLIError(error, bus: calls.bus)
            }
            if let message = errors[field.id] ?? errors[field.id + ".other"] {
                say(style.red("  ✗ " + message) + "\n")
                continue
            }
            return .answered
        }
    }

    /// The options a choice offers, numbered from 1, Other last.
    private func choiceList(_ field: StepField) -> [ChoiceOption] {
        guard field.type == .choice || field.type == .multichoice else { return [] }
        var list = field.options
        if field.other { list.append(ChoiceOption(id: "other", label: field.label(ofOption: "other") ?? "Other")) }
        return list
    }

    private func prompt(for field: StepField, choices: [ChoiceOption]) -> String {
        var text = ""
        let yes = Strings.builtin.text(.yes, locale: locale)
        let no = Strings.builtin.text(.no, locale: locale)
        if field.type == .toggle { text += "(\(yes.lowercased())/\(no.lowercased())) " }
        if let current = currentAnswer(field, choices: choices, yes: yes, no: no) {
            text += style.dim("[\(current)]") + " "
        } else if !field.placeholder.isEmpty {
            text += style.dim("(\(field.placeholder))") + " "
        }
        return text + style.bold("> ")
    }

    /// The current answer as the prompt's default.
    private func currentAnswer(_ field: StepField, choices: [ChoiceOption], yes: String, no: String) -> String? {
        if field.isSecure { return field.isSet ? Strings.builtin.text(.secureMask, locale: locale) : nil }
        guard let value = field.value else { return nil }
        switch field.type {
        case .choice:
            guard let id = value.string else { break }
            let label = choices.first { $0.id == id }?.label ?? id
            if id == "other", let other = field.otherValue, !other.isEmpty { return label + ": " + other }
            return label
        case .multichoice:
            guard let ids = value.strings else { break }
            return ids.map { id in choices.first { $0.id == id }?.label ?? id }.joined(separator: ", ")
        default: break
        }
        let shown = Render.value(value, yes: yes, no: no)
        return shown.isEmpty ? nil : shown
    }

    /// What a typed line means for `field`: the D-Bus value, or a message in
    /// the session's language saying what is expected.
    private func interpret(_ text: String, field: StepField, choices: [ChoiceOption]) -> Result<DBusValue, Interpretation> {
        switch field.type {
        case .choice:
            if let number = Int(text), (1...max(choices.count, 1)).contains(number), number <= choices.count {
                return .success(.string(choices[number - 1].id))
            }
            if let id = AnswerTyping.option(text, of: field) { return .success(.string(id)) }
            if choices.isEmpty { return .success(.string(text)) }
            return .failure(Interpretation(WizardText.chooseOption.text(locale, ["max": String(choices.count)])))
        case .multichoice:
            var ids: [String] = []
            for item in text.split(separator: ",") {
                let word = item.trimmed
                if word.isEmpty { continue }
                let id: String?
                if let number = Int(word), number >= 1, number <= choices.count {
                    id = choices[number - 1].id
                } else {
                    id = AnswerTyping.option(word, of: field)
                }
                guard let id else {
                    return .failure(Interpretation(WizardText.chooseOptions.text(locale, ["max": String(choices.count)])))
                }
                if !ids.contains(id) { ids.append(id) }
            }
            return .success(.strings(ids))
        case .toggle:
            guard let flag = AnswerTyping.toggle(text, locale: locale) else {
                let yes = Strings.builtin.text(.yes, locale: locale).lowercased()
                let no = Strings.builtin.text(.no, locale: locale).lowercased()
                return .failure(Interpretation(WizardText.answerYesNo.text(locale, ["yes": yes, "no": no])))
            }
            return .success(.bool(flag))
        case .number:
            guard let number = AnswerTyping.number(text) else {
                return .failure(Interpretation(WizardText.enterNumber.text(locale)))
            }
            return .success(number)
        default:
            return .success(.string(text))
        }
    }

    /// Why a typed line does not fit a field, in the session's language.
    private struct Interpretation: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    // MARK: review

    private func reviewPage(_ step: StepPage) throws(CLIError) -> Outcome {
        let review = try call { [session] s async throws(FlowClientError) in try await s.review(session) }
        say("\n" + Render.progress(step, locale: locale, style: style))
        if !step.description.isEmpty && step.description != review.note { say(style.dim(step.description) + "\n") }
        say("\n" + Render.review(review, numbered: true, style: style))

        var actions = ["Enter: " + step.continueLabel]
        if !review.groups.isEmpty {
            let range = review.groups.count == 1 ? "1" : "1–\(review.groups.count)"
            actions.append(range + ": " + WizardText.editStep.text(locale))
        }
        if step.canGoBack { actions.append("b: " + step.backLabel) }
        actions.append("q: " + WizardText.quit.text(locale))
        say("\n" + style.dim(actions.joined(separator: " · ")) + "\n")

        while true {
            say(style.bold("> "))
            guard let line = try input.readLine(echo: true) else { return .ended }
            let word = line.trimmed.lowercased()
            if let number = Int(word), number >= 1, number <= review.groups.count {
                let target = review.groups[number - 1].step
                try call { [session] s async throws(FlowClientError) in try await s.goTo(session, step: target) }
                return .next
            }
            switch word {
            case "":
                return try submit()
            case "b", ":back":
                guard step.canGoBack else { continue }
                try call { [session] s async throws(FlowClientError) in try await s.back(session) }
                return .next
            case "q", ":quit":
                return .quit
            default:
                say(style.yellow(actions.joined(separator: " · ")) + "\n")
            }
        }
    }

    private func submit() throws(CLIError) -> Outcome {
        do {
            try spinning(Strings.builtin.text(.submitting, locale: locale)) { () throws(FlowClientError) in
                try calls.request { [session] s async throws(FlowClientError) in try await s.submit(session) }
            }
        } catch {
            switch error.flowdName {
            case .submitFailed?, .timeout?, .cancelled?, .invalidState?:
                say("\n" + style.red("✗ " + error.message) + "\n")
            case .validationFailed?:
                say("\n" + style.yellow(error.message) + "\n")
            default:
                throw CLIError(error, bus: calls.bus)
            }
        }
        return .next
    }
}
