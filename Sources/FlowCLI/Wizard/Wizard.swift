import DBus
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol
import FlowdSystem

/// The interactive wizard of `flowctl run` and `flowctl resume`: one step at a
/// time with its progress line, a prompt per field by type, the daemon's
/// errors right under the field, Back, Review with Edit, and a submit that
/// can be cancelled while it runs.
///
/// It holds no state of its own beyond the screen: every step is read back
/// from the daemon, so leaving at any point (Ctrl-C, `:quit`, the end of the
/// input) leaves a session that `resume` picks up exactly where it was.
struct Wizard: Sendable {
    let calls: FlowdCalls
    let session: String
    let flow: FlowSummary?
    /// The session's language, for the wizard's own strings.
    let locale: String
    let input: any LineSource
    let output: any TextSink
    let style: Style
    let spinner: (sink: any TextSink, fd: Int32?)?
    /// "flowctl" with the bus options it was started with, for the hints.
    let flowctl: String
    /// Ctrl-C is this process's to handle (not in the unit tests).
    let handlesInterrupts: Bool
    /// The terminal's width, for ``prose(_:)``; nil when not on a terminal.
    let columns: @Sendable () -> Int?

    /// What one page of the wizard ended with.
    enum Outcome {
        /// Read the current step again and go on from there.
        case next
        /// `:quit` or `q`.
        case quit
        /// Standard input ended.
        case ended
        /// The person left while a submit runs; it goes on in flowd.
        case leftRunning
    }

    /// "Session … is saved. Resume it with: flowctl resume …" in the session's language.
    var savedMessage: String {
        FlowctlText.saved.text(locale, ["id": session, "command": flowctl + " resume " + session])
    }

    /// The line for leaving while a submit runs: it goes on, and how to see its end.
    var goesOnMessage: String {
        FlowctlText.submitGoesOn.text(locale, ["id": session, "command": flowctl + " show " + session])
    }

    func say(_ text: String) { output.write(text) }

    /// Sentences a person reads (descriptions, help, hints, messages) broken
    /// at spaces, or between CJK characters, to fit the terminal, instead of
    /// wherever the terminal cuts them; as they are when not on a terminal.
    func prose(_ text: String) -> String {
        guard let width = columns(), width > 20 else { return text }
        // One column spare: a line that fills the last one wraps early on some terminals.
        return wrapped(text, width: width - 1)
    }

    /// flowctl's own text in the session's language.
    func text(_ key: FlowctlText, _ arguments: [String: String] = [:]) -> String { key.text(locale, arguments) }

    /// flowd's built-in text in the session's language.
    func builtin(_ key: BuiltinString, _ arguments: [String: String] = [:]) -> String {
        Strings.builtin.text(key, locale: locale, arguments)
    }

    func currentStep() throws(CLIError) -> StepPage {
        try calls.call { [session] s async throws(FlowClientError) in try await s.step(session) }
    }

    func properties() throws(CLIError) -> SessionProperties {
        try calls.call { [session] s async throws(FlowClientError) in try await s.properties(session) }
    }

    func spinning<T, E: Error>(_ message: String, _ body: () throws(E) -> T) throws(E) -> T {
        guard let spinner else { return try body() }
        return try Spinner.during(message, enabled: true, sink: spinner.sink, fd: spinner.fd, body)
    }

    /// An action line: "Enter: Continue · b: Back · q: Quit".
    func actionLine(_ actions: [(key: String, label: String)]) -> String {
        actions.map { labelled($0.key, $0.label) }.joined(separator: " · ")
    }

    /// "Name: Ada", "Enter: Continue", punctuated as the session's language does it ("Nom : Ada").
    func labelled(_ label: String, _ value: String) -> String {
        text(.labelValue, ["label": label, "value": value])
    }

    /// "Japanese is not available for this flow; showing English." when
    /// the flow has no text in the session's language, said once at the
    /// start (flowctl's own words and flowd's built-in ones still follow
    /// the session's language); nil when it has.
    func languageMissing() -> String? {
        guard let flow, let index = LocaleFallback.bestMatch(for: locale, in: flow.locales) else { return nil }
        func language(_ tag: String) -> String {
            LocaleFallback.normalize(tag).split(separator: "-").first.map { $0.lowercased() } ?? tag
        }
        let shown = flow.locales[index]
        guard language(shown) != language(locale) else { return nil }
        return text(.languageMissing, [
            "requested": FlowctlText.languageName(locale, in: locale),
            "shown": FlowctlText.languageName(shown, in: locale),
        ])
    }

    /// Runs the wizard to the end: 0 once submitted, 0 after `:quit` (the
    /// session is kept), 1 when the input ends first.
    func run() throws(CLIError) -> ExitCode {
        var properties = try properties()
        say(style.bold(flow?.title(in: locale) ?? properties.flowID) + "\n")
        // Nothing is left to answer: the result, without the instructions.
        if properties.state == .submitted { return try completed(try currentStep(), properties) }
        if let missing = languageMissing() { say(style.yellow(prose(missing)) + "\n") }
        // In the session's language, as the title (the English one only when the flow lacks it).
        if let description = flow?.description(in: locale), !description.isEmpty { say(style.dim(prose(description)) + "\n") }
        say(style.dim(prose(text(.intro))) + "\n")
        while true {
            if properties.state == .submitting {
                say(style.yellow(text(.waiting)) + "\n")
                switch try waitForRunningSubmit() {
                case .leftRunning:
                    say("\n" + goesOnMessage + "\n")
                    return .success
                default: break
                }
            }
            let step = try currentStep()
            let outcome: Outcome
            switch step.kind {
            case .complete:
                return try completed(step, try self.properties())
            case .review:
                outcome = try reviewPage(step)
            default:
                outcome = try stepPage(step)
            }
            switch outcome {
            case .next:
                properties = try self.properties()
            case .quit:
                say("\n" + savedMessage + "\n")
                return .success
            case .ended:
                say("\n" + text(.inputEnded) + " " + savedMessage + "\n")
                return .failure
            case .leftRunning:
                say("\n" + goesOnMessage + "\n")
                return .success
            }
        }
    }

    /// The end: the success title and message, and the receipt's reference.
    private func completed(_ step: StepPage, _ properties: SessionProperties) throws(CLIError) -> ExitCode {
        say("\n" + style.green("✓ " + step.title) + "\n")
        if !step.body.isEmpty { say(prose(step.body) + "\n") }
        if let reference = Render.reference(properties.receipt) {
            say(text(.reference, ["reference": reference]) + "\n")
        }
        return .success
    }
}
