import DBus
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol

/// Form and content steps: each field asked until flowd accepts its answer.
extension Wizard {
    /// What a field prompt ended with.
    enum FieldOutcome {
        case answered, back, quit, ended
    }

    func stepPage(_ first: StepPage) throws(CLIError) -> Outcome {
        say("\n" + Render.progress(first, locale: locale, style: style))
        if !first.description.isEmpty { say(style.dim(prose(first.description)) + "\n") }
        // The step's own rules (plugin step validators), said before its fields.
        for hint in first.ruleHints where !hint.text.isEmpty { say(style.dim(prose(hint.text)) + "\n") }
        if !first.body.isEmpty { say("\n" + prose(first.body) + "\n") }
        if !first.error.isEmpty { say(style.red(prose("✗ " + first.error)) + "\n") }
        if !first.warning.isEmpty { say(style.yellow(prose("! " + first.warning)) + "\n") }

        var step = first
        // Fields already answered (after Back, Edit or a resume) are shown,
        // not asked again; "e" asks them all. Computed fields are never asked.
        let askable = step.fields.filter { $0.type != .computed }
        var toAsk = askable.filter { !$0.isSet || !$0.error.isEmpty }
        if toAsk.count < askable.count { say("\n") }
        for field in askable where !toAsk.contains(field) {
            say(labelled(style.bold(field.label.isEmpty ? field.id : field.label), currentAnswer(field) ?? "") + "\n")
        }
        // The last step of a flow without Review submits on Continue.
        let submits = try properties().path.last.map { $0.step == step.id && $0.step != "review" } ?? false
        var failedSubmit = false
        while true {
            switch try askFields(toAsk, step: &step) {
            case .answered: break
            case .back:
                if step.canGoBack {
                    try calls.call { [session] s async throws(FlowClientError) in try await s.back(session) }
                    return .next
                }
                say(style.yellow(text(.firstStep)) + "\n")
                return .next
            case .quit: return .quit
            case .ended: return .ended
            }
            step = try currentStep()
            // What flowd worked out from the answers: "Estimated price: 1,440 €".
            for field in step.fields where field.type == .computed && !field.display.isEmpty {
                say(labelled(style.bold(field.label), field.display) + "\n")
            }

            // The actions: Continue (Enter), Back, change the answers, Quit.
            let continueLabel = failedSubmit ? builtin(.tryAgain) : step.continueLabel
            var actions = [(text(.keyEnter), continueLabel)]
            if step.canGoBack { actions.append(("b", step.backLabel)) }
            if !step.fields.isEmpty { actions.append(("e", text(.change))) }
            actions.append(("q", text(.quit)))
            say("\n" + style.dim(actionLine(actions)) + "\n")
            var choice: String?
            while choice == nil {
                say(style.bold("> "))
                guard let line = try input.readLine(echo: true) else { return .ended }
                let word = AnswerTyping.halfWidth(line).trimmed.lowercased()
                switch word {
                case "", "b", "e", "q", ":back", ":quit": choice = word
                default: say(style.yellow(actionLine(actions)) + "\n")
                }
            }
            switch choice {
            case "b", ":back":
                guard step.canGoBack else {
                    say(style.yellow(text(.firstStep)) + "\n")
                    continue
                }
                try calls.call { [session] s async throws(FlowClientError) in try await s.back(session) }
                return .next
            case "e":
                toAsk = step.fields.filter { $0.type != .computed }
                continue
            case "q", ":quit":
                return .quit
            default:
                break
            }

            let result: Result<[String: String], FlowClientError>
            if submits {
                switch try submitting({ [session] s async throws(FlowClientError) in try await s.continueStep(session) }) {
                case .finished(let outcome): result = outcome
                case .leftRunning: return .leftRunning
                }
            } else {
                result = spinning(step.continueLabel + "…") {
                    Result { () throws(FlowClientError) in
                        try calls.request { [session] s async throws(FlowClientError) in try await s.continueStep(session) }
                    }
                }
            }
            let errors: [String: String]
            switch result {
            case .success(let found): errors = found
            case .failure(let error):
                switch try submitFailure(error) {
                case .stay:
                    // The message is next to the prompt; the fields keep their answers.
                    failedSubmit = true
                    toAsk = []
                    continue
                case .moved: return .next
                }
            }
            if errors.isEmpty { return .next }

            // Stayed: a step-level message once, then the fields with errors,
            // each asked again under its own error.
            step = try currentStep()
            if let stepError = errors[""] { say("\n" + style.red("✗ " + stepError) + "\n") }
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
            let outcome = try ask(field)
            guard case .answered = outcome else { return outcome }
            let before = Set(step.fields.map(\.id))
            step = try currentStep()
            if let warning = step.field(id)?.warning, !warning.isEmpty { say(style.yellow("  ! " + warning) + "\n") }
            let appeared = step.fields.filter { $0.type != .computed && !before.contains($0.id) && !asked.contains($0.id) }
            queue = appeared.map(\.id) + queue
        }
        return .answered
    }

    // MARK: one field

    /// Asks one field until flowd accepts the answer (or the person keeps
    /// an accepted one, skips an optional field, goes back or quits). After
    /// every refusal the field is read back from flowd: its label is shown
    /// again with what flowd holds now, and Enter never keeps a refused value.
    func ask(_ asked: StepField) throws(CLIError) -> FieldOutcome {
        var field = asked
        let choices = choiceList(field)
        showHeader(field, choices: choices)
        if !field.error.isEmpty { showRefusal(field, error: field.error, repeatLabel: false) }

        while true {
            let promptText = prompt(for: field)
            guard let line = try input.readLine(echo: !field.isSecure, prompt: { say(promptText) }) else { return .ended }
            let typed = field.isSecure ? line : line.trimmed
            switch typed {
            case ":back", ":b": return .back
            case ":quit", ":q": return .quit
            default: break
            }
            var answers: [String: DBusValue]
            if typed.isEmpty || typed == ":clear" {
                let refused = !field.error.isEmpty
                if typed.isEmpty && !refused && (field.isSet || !field.mustBeAnswered) { return .answered }
                if typed.isEmpty && refused && field.mustBeAnswered {
                    // Enter does not keep what flowd refused: say why again.
                    showRefusal(field, error: field.error, repeatLabel: true)
                    continue
                }
                if typed.isEmpty && field.mustBeAnswered && (field.type == .number || field.type == .toggle) {
                    // flowd takes no empty value for these; its own words for "required".
                    say(style.red("  ✗ " + builtin(.required)) + "\n")
                    continue
                }
                // Clear: an optional field left empty, `:clear`, or a required
                // text field, for flowd to say why it cannot stay empty.
                answers = [field.id: field.type == .multichoice ? .strings([]) : .string("")]
            } else {
                switch interpret(typed, field: field, choices: choices) {
                case .failure(let problem):
                    say(style.red("  ✗ " + problem.message) + "\n")
                    continue
                case .success(let value):
                    answers = [field.id: value]
                }
                if answers[field.id]?.string == "other" {
                    guard let other = try readOther(field) else { return .ended }
                    answers[field.id + ".other"] = .string(other)
                }
            }
            switch try send(answers, for: &field) {
            case .accepted: return .answered
            case .refused: continue
            case .otherRefused:
                // Only Other's text failed: ask for it again, not the choice.
                var verdict = Verdict.otherRefused
                while verdict == .otherRefused {
                    guard let other = try readOther(field) else { return .ended }
                    verdict = try send([field.id: .string("other"), field.id + ".other": .string(other)], for: &field)
                }
                if verdict == .accepted { return .answered }
            }
        }
    }

    /// What flowd said about an answer.
    private enum Verdict {
        case accepted, refused, otherRefused
    }

    /// Sends `answers`, reads the field back as flowd now holds it, and says
    /// what it refused.
    private func send(_ answers: [String: DBusValue], for field: inout StepField) throws(CLIError) -> Verdict {
        let errors: [String: String]
        do {
            errors = try calls.request { [session] s async throws(FlowClientError) in try await s.setAnswers(session, answers) }
        } catch where error.flowdName == .invalidArgs || error.flowdName == .limitExceeded {
            // Refused outright, nothing stored: say so, with what flowd still holds.
            field = (try currentStep().field(field.id)) ?? field
            showRefusal(field, error: ErrorText.sentence(for: error, locale: locale), repeatLabel: true)
            return .refused
        } catch {
            throw CLIError(error, bus: calls.bus, locale: locale, asksPassword: calls.asksPassword)
        }
        field = (try currentStep().field(field.id)) ?? field
        // Other chosen with no text: flowd's error is about the text alone.
        let chosen = field.value?.string.map { [$0] } ?? field.value?.strings ?? []
        let otherIsBlank = chosen.contains("other") && (field.otherValue ?? "").trimmed.isEmpty
        if let message = errors[field.id + ".other"] ?? (otherIsBlank ? errors[field.id] : nil) {
            say(style.red("  ✗ " + message) + "\n")
            return .otherRefused
        }
        if let message = errors[field.id] {
            showRefusal(field, error: message, repeatLabel: true)
            return .refused
        }
        return .accepted
    }

    /// Reads Other's free text under its label; nil when the input ends.
    private func readOther(_ field: StepField) throws(CLIError) -> String? {
        var line = style.bold(field.label(ofOption: "other") ?? builtin(.other))
        if let current = field.otherValue, !current.isEmpty, field.error.isEmpty { line += " " + style.dim("[\(current)]") }
        say(line + "\n")
        guard let typed = try input.readLine(echo: true, prompt: { say(style.bold("> ")) }) else { return nil }
        let other = typed.trimmed
        if other.isEmpty, let current = field.otherValue, !current.isEmpty, field.error.isEmpty { return current }
        return other
    }

    /// The field's label, its help and hints, its options and rules.
    private func showHeader(_ field: StepField, choices: [ChoiceOption]) {
        say("\n" + labelLine(field) + "\n")
        if !field.help.isEmpty { say(style.dim(prose(field.help)) + "\n") }
        // The choice's hint, the pattern's and the rules beyond the field's own
        // constraints (comparisons, requiredIf, plugin validators), up front.
        for hint in field.hintTexts { say(style.dim(prose(hint)) + "\n") }
        // Numbers right-aligned, so that labels line up past 9 options.
        let digits = String(choices.count).count
        for (number, option) in choices.enumerated() {
            let shown = String(repeating: " ", count: digits - String(number + 1).count) + "\(number + 1))"
            say("  " + style.cyan(shown) + " " + option.label + "\n")
        }
        let rules = FieldRules.describe(field, locale: locale)
        if !rules.isEmpty && field.type != .toggle { say(style.dim(rules) + "\n") }
        if !field.placeholder.isEmpty && !field.isSet { say(style.dim(text(.example, ["text": field.placeholder])) + "\n") }
        if field.isOptional {
            let keeps = field.isSet && field.error.isEmpty
            say(style.dim(prose(text(keeps ? .optionalKeepHint : .optionalHint))) + "\n")
        }
    }

    /// "Email *", "I accept the terms *" (a toggle that must be on), or
    /// "Phone (optional)"; a field a rule may make required says neither,
    /// its hint says when.
    private func labelLine(_ field: StepField) -> String {
        let label = field.label.isEmpty ? field.id : field.label
        if field.mustBeAnswered { return style.bold(label) + " *" }
        guard field.isOptional else { return style.bold(label) }
        let optional = builtin(.optional)
        // A label that says it already ("Phone (optional)") is not told twice.
        if label.lowercased().contains(optional.lowercased()) { return style.bold(label) }
        // A full-width parenthesis ("（任意）") brings its own space.
        return style.bold(label) + (optional.hasPrefix("（") ? "" : " ") + style.dim(optional)
    }

    /// A refusal: flowd's `error`, then the label again (when the prompt is
    /// not right under it) and the answer flowd holds, which Enter will not keep.
    private func showRefusal(_ field: StepField, error: String, repeatLabel: Bool) {
        if !error.isEmpty { say(style.red(prose("  ✗ " + error)) + "\n") }
        if repeatLabel { say(labelLine(field) + "\n") }
        if field.isSet, !field.error.isEmpty, let held = currentAnswer(field) {
            say(style.yellow(prose(text(.refusedAnswer, ["value": held]))) + "\n")
        }
    }

    /// The options a choice offers, numbered from 1, Other last.
    func choiceList(_ field: StepField) -> [ChoiceOption] {
        guard field.type == .choice || field.type == .multichoice else { return [] }
        var list = field.options
        if field.other { list.append(ChoiceOption(id: "other", label: field.label(ofOption: "other") ?? builtin(.other))) }
        return list
    }

    /// The prompt: yes/no for a toggle, and `[answer]` only for an answer
    /// flowd accepted, which Enter keeps.
    private func prompt(for field: StepField) -> String {
        var prompt = ""
        if field.type == .toggle {
            prompt += "(\(builtin(.yes).lowercased())/\(builtin(.no).lowercased())) "
        }
        if field.error.isEmpty, let current = currentAnswer(field) {
            prompt += style.dim("[\(current)]") + " "
        }
        return prompt + style.bold("> ")
    }

    /// The current answer as a person reads it: option labels, yes/no, a mask.
    func currentAnswer(_ field: StepField) -> String? {
        if field.isSecure { return field.isSet ? builtin(.secureMask) : nil }
        guard let value = field.value else { return nil }
        switch field.type {
        case .choice:
            guard let id = value.string else { break }
            let label = field.label(ofOption: id) ?? id
            if id == "other", let other = field.otherValue, !other.isEmpty { return labelled(label, other) }
            return label
        case .multichoice:
            guard let ids = value.strings else { break }
            return ids.map { field.label(ofOption: $0) ?? $0 }.joined(separator: builtin(.listSeparator))
        default: break
        }
        let shown = Render.value(value, yes: builtin(.yes), no: builtin(.no))
        return shown.isEmpty ? nil : shown
    }

    /// What a typed line means for `field`: the D-Bus value, or a message in
    /// the session's language saying what is expected.
    private func interpret(_ typed: String, field: StepField, choices: [ChoiceOption]) -> Result<DBusValue, Interpretation> {
        switch field.type {
        case .choice:
            if let number = Int(AnswerTyping.halfWidth(typed)), number >= 1, number <= choices.count {
                return .success(.string(choices[number - 1].id))
            }
            if let id = AnswerTyping.option(typed, of: field) { return .success(.string(id)) }
            if choices.isEmpty { return .success(.string(typed)) }
            return .failure(Interpretation(text(.chooseOption, ["max": String(choices.count)])))
        case .multichoice:
            var ids: [String] = []
            for word in AnswerTyping.listItems(typed) {
                let id: String?
                if let number = Int(word), number >= 1, number <= choices.count {
                    id = choices[number - 1].id
                } else {
                    id = AnswerTyping.option(word, of: field)
                }
                guard let id else {
                    return .failure(Interpretation(text(.chooseOptions, ["max": String(choices.count)])))
                }
                if !ids.contains(id) { ids.append(id) }
            }
            return .success(.strings(ids))
        case .toggle:
            guard let flag = AnswerTyping.toggle(typed, locale: locale) else {
                let yes = builtin(.yes).lowercased()
                let no = builtin(.no).lowercased()
                return .failure(Interpretation(text(.answerYesNo, ["yes": yes, "no": no])))
            }
            return .success(.bool(flag))
        case .number:
            guard let number = AnswerTyping.number(typed) else {
                return .failure(Interpretation(text(.enterNumber)))
            }
            return .success(number)
        default:
            return .success(.string(typed))
        }
    }

    /// Why a typed line does not fit a field, in the session's language.
    private struct Interpretation: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
