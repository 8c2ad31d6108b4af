import DBus
import FlowClient
import FlowEngine
import FlowProtocol
import FlowdSystem
import PluginHost

/// Runs one parsed command against the daemon (or offline, for `check`).
final class CommandRunner {
    let command: ParsedCommand
    let context: FlowctlContext
    let style: Style
    let errorStyle: Style
    private var openedCalls: FlowdCalls?
    /// polkit's text agent, while this run may need it.
    private var agent: AuthenticationAgent?

    init(command: ParsedCommand, context: FlowctlContext) {
        self.command = command
        self.context = context
        style = Style.decide(option: command.global.color, isTerminal: context.stdoutIsTerminal, environment: context.environment)
        errorStyle = Style.decide(option: command.global.color, isTerminal: context.stderrIsTerminal, environment: context.environment)
    }

    var json: Bool { command.global.json }

    /// The person's language (`LC_ALL`, `LC_MESSAGES`, `LANG`), for flowctl's
    /// own words outside a session; English when the environment names none.
    var personLocale: String { RequestedLocale.fromEnvironment { context.environment[$0] } ?? "en" }

    /// The calls allow interactive authorization: a person is at the
    /// terminal, and `--no-ask-password` was not given (as systemctl does).
    var allowsInteractiveAuthorization: Bool { command.global.askPassword && context.stdinIsTerminal }

    /// The calls to flowd, made at first use (with polkit's text agent, when
    /// ``AuthenticationAgent/isWanted(interactive:bus:stdinIsTerminal:)``).
    func calls() throws(CLIError) -> FlowdCalls {
        if let openedCalls { return openedCalls }
        let bus = command.global.bus
        let interactive = allowsInteractiveAuthorization
        if context.startsAuthenticationAgent,
           AuthenticationAgent.isWanted(interactive: interactive, bus: bus, stdinIsTerminal: context.stdinIsTerminal) {
            agent = AuthenticationAgent.start()
        }
        var made = FlowdCalls(service: try context.makeService(bus, interactive), bus: bus, cleansText: !json)
            .speaking(personLocale)
        made.asksPassword = interactive
        openedCalls = made
        return made
    }

    /// Ends what the run started (polkit's agent).
    func finish() {
        agent?.stop()
        agent = nil
    }

    /// Runs a call to flowd and waits for it; a failure is flowctl's error.
    func call<T: TerminalSafe & Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(CLIError) -> T {
        try calls().call(body)
    }

    /// Runs a call to flowd that returns nothing, and waits for it.
    func call(_ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> Void) throws(CLIError) {
        try calls().call(body)
    }

    /// Runs a call to flowd for shell completion: nil on any failure.
    private func quietly<T: TerminalSafe & Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) -> T? {
        try? calls().request(body)
    }

    func out(_ text: String) { context.stdout.write(text) }
    func err(_ text: String) { context.stderr.write(text) }
    func printJSON(_ value: JSONOutput) { out(value.pretty() + "\n") }

    /// The spinner is for people: only on a terminal, and never in JSON mode.
    var spinnerEnabled: Bool { context.stderrIsTerminal && !json }

    func run() throws(CLIError) -> ExitCode {
        let args = command.arguments
        switch command.spec.name {
        case "flows": return try flows()
        case "start": return try start(flow: args[0])
        case "sessions": return try sessions()
        case "show": return try onSession(args[0], show)
        case "set": return try onSession(args[0]) { id throws(CLIError) in try set(id, Array(args.dropFirst())) }
        case "continue": return try onSession(args[0], continueStep)
        case "back": return try onSession(args[0], back)
        case "goto": return try onSession(args[0]) { id throws(CLIError) in try goTo(id, step: args[1]) }
        case "review": return try onSession(args[0], review)
        case "answers": return try onSession(args[0], answers)
        case "submit": return try onSession(args[0], submit)
        case "cancel":
            return try onSession(args[0]) { id throws(CLIError) in
                try call { s async throws(FlowClientError) in try await s.cancel(id) }
                return .success
            }
        case "close":
            return try onSession(args[0]) { id throws(CLIError) in
                try call { s async throws(FlowClientError) in try await s.close(id) }
                return .success
            }
        case "plugins": return try plugins()
        case "status": return try status()
        case "reload": return try reload()
        case "watch": return try onSession(args[0], watch)
        case "check": return check(args)
        case "run":
            if let file = command.options["answers"] { return try runAnswers(flow: args[0], file: file) }
            if command.flag("submit") || command.flag("dry-run") {
                throw .usage("--submit and --dry-run go with --answers FILE (see 'flowctl run --help')")
            }
            return try runWizard(flow: args[0])
        case "resume": return try onSession(args[0], resumeWizard)
        case "__complete":
            out(completions(args).map { $0 + "\n" }.joined())
            return .success
        default: throw .usage("unknown command \(quote(command.spec.name))")
        }
    }

    // MARK: session ids

    /// Runs `body` on the session `text` names. When flowd answers "not
    /// found" and the session is gone, that is what the person is told (for
    /// `goto` it may be the step instead, which flowd's sentence covers).
    private func onSession(_ text: String, _ body: (String) throws(CLIError) -> ExitCode) throws(CLIError) -> ExitCode {
        let id = try resolveSession(text)
        do {
            return try body(id)
        } catch where error.code == .notFound {
            if quietly({ s async throws(FlowClientError) in try await s.properties(id) }) == nil {
                throw CLIError(.notFound, FlowctlText.errorNoSession.text(personLocale, ["id": id]))
            }
            throw error
        }
    }

    /// A full session id from `text`: the id itself, or a unique beginning of
    /// one of the caller's sessions (like git's abbreviated commits).
    func resolveSession(_ text: String) throws(CLIError) -> String {
        let id = text.lowercased()
        let isHex = !id.isEmpty && id.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
        guard isHex, id.count <= 32 else {
            throw .usage("\(quote(text)) is not a session id (32 hex characters, or the beginning of one; see 'flowctl sessions')")
        }
        if id.count == 32 { return id }
        let matches = try call { s async throws(FlowClientError) in try await s.listSessions() }.filter { $0.id.hasPrefix(id) }
        switch matches.count {
        case 1: return matches[0].id
        case 0: throw CLIError(.notFound, "no session of yours starts with \(quote(id)) (see 'flowctl sessions')")
        default: throw .usage("\(quote(id)) is the beginning of \(matches.count) sessions; give more of the id")
        }
    }

    /// The locale for a new session: `--locale`, else the environment's
    /// (`LC_ALL`, `LC_MESSAGES`, `LANG`), else nil (the daemon's default, en).
    func requestedLocale() throws(CLIError) -> String? {
        if let given = command.options["locale"] {
            guard LocaleFallback.isWellFormed(given) else {
                throw CLIError(.usage, "\(quote(given)) is not a language tag (examples: en, de, pt-BR)")
            }
            return given
        }
        return RequestedLocale.fromEnvironment { context.environment[$0] }
    }

    // MARK: lists

    func flows() throws(CLIError) -> ExitCode {
        let flows = try call { s async throws(FlowClientError) in try await s.listFlows() }.sorted { $0.id < $1.id }
        if json {
            printJSON(.array(flows.map(JSONShapes.flow)))
        } else if command.flag("quiet") {
            out(flows.map { $0.id + "\n" }.joined())
        } else if flows.isEmpty {
            // Its flows directory may hold flows it refused: the log says which and why.
            err(FlowctlText.noFlows.text(personLocale) + "\n")
        } else {
            out(Render.flows(flows, locale: personLocale, style: style))
        }
        return .success
    }

    func sessions() throws(CLIError) -> ExitCode {
        let filter = try SessionFilter.parse(command.options)
        let listed = try call { s async throws(FlowClientError) in try await s.listSessions() }
            .sorted { ($0.flowID, $0.id) < ($1.flowID, $1.id) }
        // The table shows each session's properties; a filter on the owner or
        // the age needs them too. A session that went away meanwhile has none.
        let showsTable = !json && !command.flag("quiet")
        let now = UInt64(clamping: WallClock.microsecondsSinceEpoch())
        let found = listed.map { listing in
            let properties = showsTable || filter.needsProperties
                ? quietly { s async throws(FlowClientError) in try await s.properties(listing.id) } : nil
            return (listing: listing, properties: properties)
        }.filter { filter.matches($0.listing, properties: $0.properties, now: now) }
        let sessions = found.map(\.listing)
        if json {
            printJSON(.array(sessions.map(JSONShapes.session)))
        } else if command.flag("quiet") {
            out(sessions.map { $0.id + "\n" }.joined())
        } else if sessions.isEmpty {
            if context.stdoutIsTerminal { err(FlowctlText.noSessions.text(personLocale) + "\n") }
        } else {
            // Which is which: each session's flow title, step and last change.
            // A session that went away meanwhile keeps its bare line.
            let flows = quietly { s async throws(FlowClientError) in try await s.listFlows() } ?? []
            let rows = found.map { session in
                Render.SessionRow(
                    listing: session.listing, properties: session.properties,
                    flow: flows.first { $0.id == session.listing.flowID })
            }
            let ownerName = { (uid: UInt32) -> String? in (try? UserDatabase.user(id: uid))??.name }
            out(Render.sessions(
                rows, now: now, locale: personLocale, style: style, shortIDs: context.stdoutIsTerminal, ownerName: ownerName))
        }
        return .success
    }

    func status() throws(CLIError) -> ExitCode {
        let status = try call { s async throws(FlowClientError) in try await s.status() }
        let now = WallClock.microsecondsSinceEpoch()
        if json {
            printJSON(JSONShapes.status(status, now: now))
        } else {
            out(Render.status(status, now: now, style: style))
        }
        return .success
    }

    /// `Reload`, then what flowd serves now, next to what it served before.
    func reload() throws(CLIError) -> ExitCode {
        // Before: to tell what the reload added and removed. Anyone may read
        // the status, so this never asks for a password; the reload may.
        let before = quietly { s async throws(FlowClientError) in try await s.status() }
        let calls = try calls()
        do {
            try calls.request { s async throws(FlowClientError) in try await s.reload() }
        } catch {
            let refusal = CLIError(error, bus: calls.bus, locale: personLocale, asksPassword: calls.asksPassword)
            switch error.flowdName {
            case .accessDenied?, .failed?:
                // Not allowed, or a configuration error: flowd's own reason
                // names the polkit action, or the file and line.
                throw CLIError(refusal.code, FlowctlText.reloadFailed.text(personLocale, ["detail": error.message]))
            default:
                throw refusal
            }
        }
        let after = try call { s async throws(FlowClientError) in try await s.status() }
        if json {
            printJSON(JSONShapes.reload(before: before, after: after))
        } else {
            out(Render.reload(before: before, after: after, locale: personLocale, style: style))
        }
        return .success
    }

    func plugins() throws(CLIError) -> ExitCode {
        let plugins = try call { s async throws(FlowClientError) in try await s.listPlugins() }.sorted { $0.name < $1.name }
        if json {
            printJSON(.array(plugins.map(JSONShapes.plugin)))
        } else if plugins.isEmpty {
            err("flowd has no plugins (see flowd(8) for the plugin directories)\n")
        } else {
            out(Render.plugins(plugins, style: style))
        }
        return .success
    }

    // MARK: sessions

    func start(flow: String) throws(CLIError) -> ExitCode {
        let locale = try requestedLocale()
        let id: String
        do {
            id = try call { s async throws(FlowClientError) in try await s.startSession(flow: flow, locale: locale, prefill: [:]) }
        } catch where error.code == .notFound {
            throw noFlow(flow, among: quietly { s async throws(FlowClientError) in try await s.listFlows() } ?? [])
        }
        if json {
            printJSON(.object(["id": .string(id), "flow": .string(flow), "locale": locale.map { .string($0) } ?? .null]))
        } else {
            out(id + "\n")
        }
        return .success
    }

    /// "No flow FLOW", with the ids of `flows`, the ones flowd serves.
    private func noFlow(_ flow: String, among flows: [FlowSummary]) -> CLIError {
        let ids = flows.map(\.id).sorted()
        return CLIError(
            .notFound, FlowctlText.errorNoFlow.text(personLocale, ["flow": flow, "flows": ids.isEmpty ? "–" : ids.joined(separator: ", ")]))
    }

    /// Prints the session's current step (with the review on Review), as `show` does.
    func printCurrentStep(_ id: String, extra: [(String, JSONOutput)] = []) throws(CLIError) {
        let properties = try call { s async throws(FlowClientError) in try await s.properties(id) }
        let step = try call { s async throws(FlowClientError) in try await s.step(id) }
        let review = step.kind == .review ? try call { s async throws(FlowClientError) in try await s.review(id) } : nil
        if json {
            var shape = JSONShapes.show(properties, step: step, review: review)
            if case .object(let pairs) = shape { shape = .object(extra + pairs) }
            printJSON(shape)
            return
        }
        let failed = properties.state == .failed
        var text = Render.step(step, locale: properties.locale, receipt: properties.receipt, style: style)
        if let review {
            text += "\n" + Render.review(review, style: style)
            // After a failed submit the same command tries again, and says so.
            let label = failed ? Strings.builtin.text(.tryAgain, locale: properties.locale) : step.continueLabel
            let command = flowctlCommand + " submit " + id
            text += "\n" + style.dim(FlowctlText.labelValue.text(properties.locale, ["label": label, "value": command])) + "\n"
        }
        // The step shows flowd's message already when it carries it.
        if failed && !properties.lastError.isEmpty && properties.lastError != step.error {
            text += "\n" + style.red("✗ " + properties.lastError) + "\n"
        } else if properties.state == .submitting {
            text += "\n" + style.yellow(Strings.builtin.text(.submitting, locale: properties.locale)) + "\n"
        }
        out(text)
    }

    func show(_ id: String) throws(CLIError) -> ExitCode {
        try printCurrentStep(id)
        return .success
    }

    func set(_ id: String, _ assignments: [String]) throws(CLIError) -> ExitCode {
        var pairs: [(key: String, value: String)] = []
        for argument in assignments { pairs.append(try AnswerTyping.assignment(argument)) }
        let step = try call { s async throws(FlowClientError) in try await s.step(id) }
        let locale = try call { s async throws(FlowClientError) in try await s.properties(id) }.locale
        for index in pairs.indices {
            let (field, isOther) = try AnswerTyping.target(pairs[index].key, in: step, locale: locale)
            if pairs[index].value == "-" {
                pairs[index].value = try readValue(for: field, isOther: isOther)
            } else if field.isSecure && !pairs[index].value.isEmpty {
                err(errorStyle.yellow("flowctl: warning:") + " the secure field \(quote(field.id)) was given on the command line, where other users may see it and your shell may keep it; use \(field.id)=- to read it from standard input\n")
            }
        }
        let answers = try AnswerTyping.answers(pairs, step: step, locale: locale)
        let errors = try call { s async throws(FlowClientError) in try await s.setAnswers(id, answers) }
        if json {
            printJSON(.object(["errors": JSONShapes.errors(errors)]))
        } else {
            printErrors(errors, step: step)
        }
        return errors.isEmpty ? .success : .failure
    }

    /// Reads a `FIELD=-` value from standard input: a prompt and no echo on a
    /// terminal for a secure field.
    private func readValue(for field: StepField, isOther: Bool) throws(CLIError) -> String {
        let secret = field.isSecure && !isOther
        let label = (field.label.isEmpty ? field.id : field.label) + (isOther ? " (\(field.otherLabel))" : "") + ": "
        let prompt = context.stdin.isTerminal ? label : ""
        guard let line = try context.stdin.readLine(echo: !secret, prompt: { err(prompt) }) else {
            throw CLIError(.dataError, "standard input ended before the value of \(quote(field.id))")
        }
        return line
    }

    /// Field errors on standard error, one per line: `field: message`.
    func printErrors(_ errors: [String: String], step: StepPage?) {
        let order = (step?.fields.map(\.id) ?? []) + [""]
        let sorted = errors.sorted { a, b in
            let ia = order.firstIndex(of: a.key) ?? Int.max, ib = order.firstIndex(of: b.key) ?? Int.max
            return ia != ib ? ia < ib : a.key < b.key
        }
        for (field, message) in sorted {
            let prefix = field.isEmpty ? "" : errorStyle.cyan(field) + ": "
            err(prefix + errorStyle.red(message) + "\n")
        }
    }

    func continueStep(_ id: String) throws(CLIError) -> ExitCode {
        let before = json ? nil : try call { s async throws(FlowClientError) in try await s.step(id) }
        let locale = spinnerEnabled ? try call { s async throws(FlowClientError) in try await s.properties(id) }.locale : "en"
        let errors = try Spinner.during(
            Strings.builtin.text(.submitting, locale: locale), enabled: spinnerEnabled, sink: context.stderr,
            fd: context.stderrFD
        ) { () throws(CLIError) in
            try call { s async throws(FlowClientError) in try await s.continueStep(id) }
        }
        if !errors.isEmpty {
            if json {
                let step = try call { s async throws(FlowClientError) in try await s.step(id) }
                printJSON(.object(["moved": .bool(false), "errors": JSONShapes.errors(errors), "step": JSONShapes.step(step)]))
            } else {
                printErrors(errors, step: before)
            }
            return .failure
        }
        try printCurrentStep(id, extra: [("moved", .bool(true))])
        return .success
    }

    func back(_ id: String) throws(CLIError) -> ExitCode {
        try call { s async throws(FlowClientError) in try await s.back(id) }
        try printCurrentStep(id)
        return .success
    }

    func goTo(_ id: String, step: String) throws(CLIError) -> ExitCode {
        try call { s async throws(FlowClientError) in try await s.goTo(id, step: step) }
        try printCurrentStep(id)
        return .success
    }

    func review(_ id: String) throws(CLIError) -> ExitCode {
        let review = try call { s async throws(FlowClientError) in try await s.review(id) }
        if json {
            var shape = JSONShapes.review(review)
            if case .object(let pairs) = shape { shape = .object([("session", .string(id))] + pairs) }
            printJSON(shape)
        } else {
            out(Render.review(review, style: style))
        }
        return .success
    }

    func answers(_ id: String) throws(CLIError) -> ExitCode {
        let answers = try call { s async throws(FlowClientError) in try await s.answers(id) }
        if json {
            printJSON(JSONOutput(answers))
        } else {
            out(Render.answers(answers, style: style))
        }
        return .success
    }

    func submit(_ id: String) throws(CLIError) -> ExitCode {
        let locale = try call { s async throws(FlowClientError) in try await s.properties(id) }.locale
        let calls = try calls()
        let failure: FlowClientError?
        do {
            try whileSubmitting(id) { () throws(FlowClientError) in
                try Spinner.during(
                    Strings.builtin.text(.submitting, locale: locale), enabled: spinnerEnabled, sink: context.stderr,
                    fd: context.stderrFD
                ) { () throws(FlowClientError) in
                    try calls.request { s async throws(FlowClientError) in try await s.submit(id) }
                }
            }
            failure = nil
        } catch {
            switch error.flowdName {
            case .submitFailed?, .timeout?, .cancelled?, .validationFailed?: failure = error
            default: throw CLIError(error, bus: calls.bus, locale: personLocale, asksPassword: calls.asksPassword)
            }
        }
        let properties = try call { s async throws(FlowClientError) in try await s.properties(id) }
        if let failure {
            var message: String
            var hint: String?
            switch failure.flowdName {
            case .validationFailed?:
                let title = properties.path.first { $0.step == properties.currentStep }?.title ?? properties.currentStep
                message = FlowctlText.notFinishedShow.text(personLocale, ["step": title, "command": flowctlCommand + " show " + id])
                hint = noReviewHint(properties, id: id)
            case .submitFailed?, .timeout?:
                // flowd's own words for the person, in the session's language.
                message = properties.lastError.isEmpty ? ErrorText.sentence(for: failure, locale: personLocale) : properties.lastError
            default:
                message = ErrorText.sentence(for: failure, locale: personLocale)
            }
            if json {
                printJSON(.object([
                    "submitted": .bool(false), "state": .string(properties.state.rawValue),
                    "error": .string(failure.message), "errorName": .string(failure.name?.rawValue ?? ""),
                    "step": .string(properties.currentStep),
                ]))
            } else {
                err(errorStyle.red("✗ " + message) + "\n")
                if let hint { err(hint + "\n") }
            }
            return .failure
        }
        let step = try call { s async throws(FlowClientError) in try await s.step(id) }
        if json {
            printJSON(.object([
                "submitted": .bool(true), "state": .string(properties.state.rawValue),
                "receipt": JSONOutput(properties.receipt),
                "message": .string(step.body),
            ]))
        } else {
            out(Render.step(step, locale: properties.locale, receipt: properties.receipt, style: style))
        }
        return .success
    }

    /// Runs `body`, a call that may submit, so that Ctrl-C says the submit
    /// goes on in flowd (it does) and how to see its end.
    func whileSubmitting<T, E: Error>(_ id: String, _ body: () throws(E) -> T) throws(E) -> T {
        guard context.handlesInterrupts else { return try body() }
        let show = flowctlCommand + " show " + id
        let message = "\n" + FlowctlText.submitGoesOn.text(personLocale, ["id": id, "command": show]) + "\n"
        return try Interrupts.whileHandling({ signal in .exit(status: 128 + signal, message: message) }, body)
    }

    /// For a flow without Review: its last step's Continue is what submits it.
    /// Nil when the path ends with Review (or is unknown).
    func noReviewHint(_ properties: SessionProperties, id: String) -> String? {
        guard let last = properties.path.last, last.step != "review" else { return nil }
        return FlowctlText.noReviewHint.text(
            personLocale, ["flow": properties.flowID, "id": id, "step": last.title.isEmpty ? last.step : last.title])
    }

    // MARK: watch

    func watch(_ id: String) throws(CLIError) -> ExitCode {
        let events = try calls().events(for: id)
        defer { events.cancel() }
        let properties = try call { s async throws(FlowClientError) in try await s.properties(id) }
        let initial = FlowEvent.propertiesChanged(
            session: id, [.state: .string(properties.state.rawValue), .currentStep: .string(properties.currentStep)])
        emit(initial, id)
        if properties.state == .submitted { return .success }
        while true {
            guard let event = try calls().next(of: events) else {
                throw CLIError(.unavailable, "flowd's events stopped coming from \(command.global.bus.displayName)")
            }
            if event == .serviceLost { throw CLIError(.unavailable, "flowd left \(command.global.bus.displayName)") }
            emit(event, id)
            switch event {
            case .manager(.sessionRemoved): return .success
            case .propertiesChanged(_, let changed) where changed[.state] == .string(SessionState.submitted.rawValue):
                // The signals of the same change (StepCompleted, Submitted,
                // Announcement) follow the property change, and flowd sends
                // them before it answers a later call: after a Ping they
                // have all arrived.
                try call { s async throws(FlowClientError) in try await s.ping() }
                for more in events.drain() {
                    emit(more, id)
                    if case .manager(.sessionRemoved) = more { break }
                }
                return .success
            default: continue
            }
        }
    }

    private func emit(_ event: FlowEvent, _ id: String) {
        switch event {
        case .manager(.sessionNew), .sessionCount, .serviceLost, .reconnected: return
        default: break
        }
        if json {
            out(JSONShapes.event(event, session: id).serialized() + "\n")
        } else {
            out(Render.event(event, time: context.stdoutIsTerminal ? CalendarTime.localNow()?.timeOfDay ?? "" : "", style: style))
        }
    }

    // MARK: completion

    /// Candidates for shell completion; none when flowd cannot be asked, so a
    /// Tab never prints an error into the command line being typed.
    func completions(_ args: [String]) -> [String] {
        let session = args.count > 1 ? (try? resolveSession(args[1])) : nil
        switch (args[0], session) {
        case ("flows", _):
            return (quietly { s async throws(FlowClientError) in try await s.listFlows() } ?? []).map(\.id).sorted()
        case ("sessions", _):
            return (quietly { s async throws(FlowClientError) in try await s.listSessions() } ?? []).map(\.id).sorted()
        case ("fields", let id?):
            guard let step = quietly({ s async throws(FlowClientError) in try await s.step(id) }) else { return [] }
            return step.fields.flatMap { field in field.other ? [field.id + "=", field.id + ".other="] : [field.id + "="] }
        case ("steps", let id?):
            guard let properties = quietly({ s async throws(FlowClientError) in try await s.properties(id) }) else { return [] }
            return properties.path.filter { $0.status != .upcoming || $0.step == "review" }.map(\.step)
        case ("values", let id?):
            guard args.count > 2, let field = quietly({ s async throws(FlowClientError) in try await s.step(id) })?.field(args[2])
            else { return [] }
            switch field.type {
            case .toggle: return ["yes", "no"]
            case .choice, .multichoice: return field.options.map(\.id) + (field.other ? ["other"] : [])
            default: return []
            }
        default:
            return []
        }
    }

    // MARK: check

    /// The largest flow file `check` reads, as the loader's own limit.
    static let checkLimit = FlowLoadLimits.default.maxFileBytes

    func check(_ files: [String]) -> ExitCode {
        var results: [JSONOutput] = []
        var bad = false
        let capabilities = command.options["plugin-dir"].map(checkPlugins(in:)) ?? .any
        for file in files {
            var problems: [(path: String, message: String)] = []
            var flowID: String?
            do {
                let bytes = try FileSystem.readFile(file, limit: Self.checkLimit)
                do {
                    let flow = try FlowLoader.load(bytes, fileName: file, capabilities: capabilities)
                    flowID = flow.id
                } catch {
                    problems = error.problems.map { ($0.path, $0.message) }
                }
            } catch {
                problems = [("", "cannot read: \(error.reason)")]
            }
            if !problems.isEmpty { bad = true }
            if json {
                results.append(.object([
                    "file": .string(file), "ok": .bool(problems.isEmpty), "flow": flowID.map { .string($0) } ?? .null,
                    "problems": .array(problems.map { .object(["path": .string($0.path), "message": .string($0.message)]) }),
                ]))
            } else if problems.isEmpty {
                out(file + ": " + style.green("ok") + style.dim(" (flow \(flowID ?? ""))") + "\n")
            } else {
                for problem in problems {
                    let location = problem.path.isEmpty ? "" : problem.path + ": "
                    out(file + ": " + location + style.red(problem.message) + "\n")
                }
            }
        }
        if json { printJSON(.array(results)) }
        return bad ? .failure : .success
    }

    /// The capabilities of the plugins in `directory`, loaded as flowd loads
    /// them (same checks, same trusted owners as a per-user flowd), with
    /// what each declares of its options. A directory or plugin the loader
    /// refuses is reported on standard error; the flows are then checked
    /// against the rest, as flowd would check them.
    func checkPlugins(in given: String) -> CapabilityCatalog {
        let directory = given.hasPrefix("/") ? given : (CurrentProcess.currentDirectory() ?? ".") + "/" + given
        let report = PluginLoader(configuration: .init(directories: [directory])).load(crashGuard: MemoryCrashGuard())
        for problem in report.directoryProblems {
            err("flowctl: plugin directory \(TerminalText.clean(problem.path)): \(TerminalText.clean(problem.reason))\n")
        }
        for record in report.registry.problems {
            err("flowctl: plugin refused: \(TerminalText.clean(record.path)): \(TerminalText.clean(record.error ?? record.status.rawValue))\n")
        }
        let registry = report.registry
        return CapabilityCatalog(registry.catalog.map { ($0.kind, $0.name) }, declaredOptions: registry.declaredOptions)
    }

    // MARK: wizard

    func runWizard(flow: String) throws(CLIError) -> ExitCode {
        let requested = try requestedLocale()
        let flows = try call { s async throws(FlowClientError) in try await s.listFlows() }
        guard let summary = flows.first(where: { $0.id == flow }) else { throw noFlow(flow, among: flows) }
        let id = try call { s async throws(FlowClientError) in try await s.startSession(flow: flow, locale: requested, prefill: [:]) }
        let locale = try call { s async throws(FlowClientError) in try await s.properties(id) }.locale
        return try wizard(id, flow: summary, locale: locale)
    }

    func resumeWizard(_ id: String) throws(CLIError) -> ExitCode {
        let properties = try call { s async throws(FlowClientError) in try await s.properties(id) }
        let flows = quietly { s async throws(FlowClientError) in try await s.listFlows() } ?? []
        return try wizard(id, flow: flows.first { $0.id == properties.flowID }, locale: properties.locale)
    }

    /// "flowctl" with the bus options this one was started with, for the
    /// commands a hint tells the person to run next.
    var flowctlCommand: String {
        (["flowctl"] + command.global.bus.commandLineOptions.map(shellQuoted)).joined(separator: " ")
    }

    private func wizard(_ id: String, flow: FlowSummary?, locale: String) throws(CLIError) -> ExitCode {
        let wizard = Wizard(
            calls: try calls().speaking(locale), session: id, flow: flow, locale: locale, input: context.stdin,
            output: context.stdout, style: style, spinner: spinnerEnabled ? (context.stderr, context.stderrFD) : nil,
            flowctl: flowctlCommand, handlesInterrupts: context.handlesInterrupts, columns: context.stdoutColumns)
        guard context.handlesInterrupts else { return try wizard.run() }
        // Ctrl-C: the signal thread restores the terminal and says how to resume.
        let message = "\n" + wizard.savedMessage + "\n"
        return try Interrupts.whileHandling({ signal in .exit(status: 128 + signal, message: message) }) {
            () throws(CLIError) in try wizard.run()
        }
    }
}
