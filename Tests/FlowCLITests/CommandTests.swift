import DBus
import FlowCLI
import FlowClient
import FlowProtocol
import FlowdSystem
import Foundation
import Testing
import TestSupport

/// Every command against the engine-backed stand-in for flowd, in the test process.
@Suite("Commands")
struct CommandTests {
    let service: EngineService

    init() throws {
        service = try EngineService()
    }

    private func run(_ arguments: [String], input: [String] = [], terminal: Bool = false,
                     environment: [String: String] = [:]) -> Run {
        flowctl(arguments, service: service, input: input, terminal: terminal, environment: environment)
    }

    /// Parses JSON output with Foundation, which is stricter than eyes.
    private func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    private func start(_ flow: String, _ extra: [String] = []) throws -> String {
        let run = run(["start", flow] + extra)
        try #require(run.status == 0, "\(run.stderr)")
        return run.stdout.trimmingCharacters(in: .newlines)
    }

    @Test("flows: a table, -q ids, --json the documented shape")
    func flows() throws {
        let table = run(["flows"])
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ID") == true)
        #expect(lines.count == 1 + service.flows.count)
        #expect(table.stdout.contains("consultation") && table.stdout.contains("Book a consultation"))
        #expect(!table.stdout.contains("\u{1B}["), "no colour when not a terminal")

        #expect(run(["flows", "-q"]).stdout == service.flows.keys.sorted().map { $0 + "\n" }.joined())

        let parsed = try #require(try json(run(["flows", "--json"]).stdout) as? [[String: Any]])
        #expect(parsed.map { $0["id"] as? String } == service.flows.keys.sorted())
        let consultation = try #require(parsed.first { $0["id"] as? String == "consultation" })
        #expect(Set(consultation.keys) == ["id", "title", "titles", "description", "locales", "steps", "review"])
        #expect(consultation["steps"] as? Int == 4)
        #expect(consultation["review"] as? Bool == true)
        #expect((consultation["titles"] as? [String: String])?["de"] == "Beratung buchen")
    }

    @Test("colour on a terminal, none with NO_COLOR")
    func colour() {
        #expect(run(["flows"], terminal: true).stdout.contains("\u{1B}["))
        #expect(!run(["flows"], terminal: true, environment: ["NO_COLOR": "1"]).stdout.contains("\u{1B}["))
        #expect(run(["flows", "--color", "always"]).stdout.contains("\u{1B}["))
    }

    @Test("start prints the 32-hex id alone; --locale and LANG pick the language")
    func start() throws {
        let id = try start("consultation")
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        #expect(service.requestedLocales[id] == .some(nil))

        let german = try start("consultation", ["--locale", "de"])
        #expect(service.requestedLocales[german] == "de")
        let fromEnvironment = run(["start", "survey"], environment: ["LANG": "fr_FR.UTF-8"])
        #expect(service.requestedLocales[fromEnvironment.stdout.trimmingCharacters(in: .newlines)] == "fr-FR")
        let cLocale = run(["start", "survey"], environment: ["LC_ALL": "C.UTF-8", "LANG": "de_DE.UTF-8"])
        #expect(service.requestedLocales[cLocale.stdout.trimmingCharacters(in: .newlines)] == .some(nil))

        let shape = try #require(try json(run(["start", "survey", "--json", "--locale", "it"]).stdout) as? [String: Any])
        #expect((shape["id"] as? String)?.count == 32)
        #expect(shape["flow"] as? String == "survey")
        #expect(shape["locale"] as? String == "it")

        let bad = run(["start", "survey", "--locale", "not a tag"])
        #expect(bad.status == 64)
        let unknown = run(["start", "nosuch"])
        #expect(unknown.status == 66)
        #expect(unknown.stderr.hasPrefix("flowctl: There is no flow “nosuch” (flows: consultation, "), "\(unknown.stderr)")
    }

    @Test("sessions: table, -q, --json; ids can be abbreviated like git's")
    func sessionsAndPrefixes() throws {
        let id = try start("survey")
        let table = run(["sessions"])
        #expect(table.stdout.contains(id) && table.stdout.contains("editing"))
        #expect(run(["sessions", "-q"]).stdout == id + "\n")
        let parsed = try #require(try json(run(["sessions", "--json"]).stdout) as? [[String: String]])
        #expect(parsed == [["id": id, "flow": "survey", "state": "editing", "path": "/org/flowd/Flow1/session/\(id)"]])

        // A unique beginning names the session…
        #expect(run(["show", String(id.prefix(6))]).status == 0)
        #expect(run(["show", id.uppercased()]).status == 0)
        // …an ambiguous one does not.
        let second = try start("survey")
        let common = String(zip(id, second).prefix { $0 == $1 }.map(\.0))
        let ambiguous = run(["show", common])
        #expect(ambiguous.status == 64)
        #expect(ambiguous.stderr.contains("2 sessions"))
    }

    @Test("sessions tells them apart: the flow's title, when it last changed, the step; on a terminal short ids")
    func sessionsListing() throws {
        let first = try start("survey")
        let second = try start("consultation", ["--locale", "de"])
        #expect(run(["set", second, "service=website"]).status == 0)
        #expect(run(["continue", second]).status == 0)

        let table = run(["sessions"]).stdout
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(table)")
        #expect(lines[0].split(separator: " ", omittingEmptySubsequences: true) == ["ID", "FLOW", "STATE", "CHANGED", "STEP"])
        let survey = try #require(lines.first { $0.hasPrefix(first) })
        #expect(survey.contains("Customer survey") && survey.contains("editing"), "\(survey)")
        #expect(survey.contains("Step 2 of 4 · "), "the survey's first step is answered by start: \(survey)")
        // The session's own language; the test's clock is in 2025, so "days ago".
        let consultation = try #require(lines.first { $0.hasPrefix(second) })
        #expect(consultation.contains("Schritt 2 von 5 · "), "\(consultation)")
        #expect(survey.contains(" days ago"), "\(survey)")
        // flowctl's own words in the person's language, the flow's in the session's.
        let german = run(["sessions"], environment: ["LANG": "de_DE.UTF-8"]).stdout
        let row = try #require(german.split(separator: "\n").first { $0.hasPrefix(second) })
        #expect(row.contains("in Bearbeitung"), "\(row)")
        #expect(row.contains("Tagen") && row.contains("Schritt 2 von 5 · "), "\(row)")
        let english = try #require(run(["sessions"]).stdout.split(separator: "\n").first { $0.hasPrefix(second) })
        #expect(english.contains("editing") && english.contains("days ago") && english.contains("Schritt 2 von 5"), "\(english)")

        // On a terminal: ids cut to 8 characters while that tells them apart; every command takes them.
        let short = run(["sessions"], terminal: true, environment: ["NO_COLOR": "1"]).stdout
        #expect(!short.contains(first) && short.contains(String(first.prefix(8)) + "  "), "\(short)")
        #expect(run(["show", String(first.prefix(8))]).status == 0)
        // Scripts get whole ids.
        #expect(run(["sessions", "-q"], terminal: true).stdout.contains(first))
    }

    @Test("unknown and malformed session ids")
    func unknownIDs() {
        let unknown = run(["show", String(repeating: "a", count: 32)])
        #expect(unknown.status == 66)
        #expect(unknown.stderr == "flowctl: There is no session \(String(repeating: "a", count: 32)).\n")
        let prefix = run(["continue", "ffff"])
        #expect(prefix.status == 66)
        #expect(prefix.stderr.contains("no session of yours starts with \"ffff\""))
        let malformed = run(["show", "not-an-id"])
        #expect(malformed.status == 64)
        #expect(malformed.stderr.contains("is not a session id"))
        #expect(run(["show", String(repeating: "a", count: 33)]).status == 64)
    }

    @Test("show: progress line and bar, fields with values and errors; --json shape")
    func show() throws {
        let id = try start("consultation")
        _ = run(["set", id, "service=website"])
        let text = run(["show", id])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("Step 1 of 5 · Service\n"))
        #expect(text.stdout.contains("█") && text.stdout.contains("░"))
        #expect(text.stdout.contains("Field:   service (choice)"))
        #expect(text.stdout.contains("Value:   website (A website)"))
        #expect(text.stdout.contains("other (Something else)"))

        let shape = try #require(try json(run(["show", id, "--json"]).stdout) as? [String: Any])
        #expect(Set(shape.keys) == ["session", "flow", "state", "locale", "lastError", "step", "review"])
        #expect(shape["review"] is NSNull)
        let step = try #require(shape["step"] as? [String: Any])
        #expect(Set(step.keys) == ["id", "kind", "title", "description", "body", "icon", "error", "announcement", "index",
                                   "count", "continueLabel", "backLabel", "canGoBack", "canContinue", "fields",
                                   "warning", "progressLabel", "flowTitle", "effectiveLocale", "ruleHints"])
        #expect(step["progressLabel"] as? String == "Step 1 of 5")
        #expect(step["flowTitle"] as? String == "Book a consultation")
        #expect(step["index"] as? Int == 1)
        #expect(step["count"] as? Int == 5)
        let field = try #require((step["fields"] as? [[String: Any]])?.first)
        #expect(Set(field.keys) == ["id", "type", "label", "help", "placeholder", "required", "options", "other",
                                    "otherLabel", "value", "otherValue", "isSet", "error", "hint", "constraints",
                                    "warning", "patternHint", "conditionallyRequired", "ruleHints", "hints"])
        #expect(field["value"] as? String == "website")
        #expect((field["options"] as? [[String: String]])?.first == ["id": "website", "label": "A website"])
    }

    @Test("show --json carries the hints a person reads before they break a rule")
    func showJSONHints() throws {
        let id = try start("registration", ["--locale", "de"])
        let shape = try #require(try json(run(["show", id, "--json"]).stdout) as? [String: Any])
        let step = try #require(shape["step"] as? [String: Any])
        let fields = try #require(step["fields"] as? [[String: Any]])
        let username = try #require(fields.first { $0["id"] as? String == "username" })
        let patternHint = "Kleinbuchstaben, Ziffern, „-“ und „_“, am Anfang ein Buchstabe"
        #expect(username["patternHint"] as? String == patternHint)
        #expect((username["hints"] as? [String])?.contains(patternHint) == true)
        #expect(username["conditionallyRequired"] as? Bool == false)

        // The next step's `equals` rule is said on the field it compares.
        _ = run(["set", id, "username=ada", "email=ada@example.org"])
        #expect(run(["continue", id]).status == 0)
        let next = try #require(try json(run(["show", id, "--json"]).stdout) as? [String: Any])
        let nextFields = try #require((next["step"] as? [String: Any])?["fields"] as? [[String: Any]])
        let hints = nextFields.flatMap { ($0["ruleHints"] as? [[String: String]]) ?? [] }
        #expect(hints.contains { $0["kind"] == "equals" && !($0["text"] ?? "").isEmpty }, "\(nextFields)")
        #expect(hints.allSatisfy { Set($0.keys) == ["kind", "subject", "text"] })
    }

    @Test("show gives the rule hints in the session's language")
    func showLocalizedRules() throws {
        let id = try start("onboarding", ["--locale", "de"])
        _ = run(["set", id, "plan=free"])
        _ = run(["continue", id])
        let text = run(["show", id])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Regeln:   mindestens 1 auswählen\n"), "\(text.stdout)")
        // The captions are German too (issue 14, item 4).
        #expect(text.stdout.contains("Feld:     reminderDays (multichoice)\n"), "\(text.stdout)")
        #expect(text.stdout.contains("Wert:     nicht gesetzt\n"), "\(text.stdout)")
        #expect(!text.stdout.contains("Field:") && !text.stdout.contains("Value:"))
    }

    @Test("set types values by field type, prints errors and exits 1 on them")
    func set() throws {
        let id = try start("consultation")
        #expect(run(["set", id, "service=website"]).status == 0)
        #expect(run(["continue", id]).status == 0)

        // A value of the wrong type is refused before any call: exit 65.
        let calls = service.calls.count
        let wrongType = run(["set", id, "pageCount=many"])
        #expect(wrongType.status == 65)
        #expect(wrongType.stderr == "flowctl: \"many\" is not a number (field \"pageCount\" is a number)\n")
        #expect(service.calls[calls...].contains("SetAnswers") == false)

        // The daemon's verdict: stored, but out of range.
        let outOfRange = run(["set", id, "pageCount=0"])
        #expect(outOfRange.status == 1)
        #expect(outOfRange.stderr.hasPrefix("pageCount: "))
        #expect(service.lastAnswers[id] == ["pageCount": .int64(0)])

        let fine = run(["set", id, "pageCount=12", "--json"])
        #expect(fine.status == 0)
        #expect(try json(fine.stdout) as? [String: [String: String]] == ["errors": [:]])
        #expect(service.lastAnswers[id] == ["pageCount": .int64(12)])

        let bad = run(["set", id, "pageCount=0", "--json"])
        let errors = try #require((try json(bad.stdout) as? [String: [String: String]])?["errors"])
        #expect(errors.keys.sorted() == ["pageCount"])

        let unknownField = run(["set", id, "colour=red"])
        #expect(unknownField.status == 65)
        #expect(unknownField.stderr.contains("not a field of step \"pages\" (fields: pageCount)"))
    }

    @Test("set refuses a value in the session's language, as flowd's own errors come")
    func setRefusalsLocalized() throws {
        let german = try start("consultation", ["--locale", "de"])
        let option = run(["set", german, "service=drucker"])
        #expect(option.status == 65)
        #expect(option.stderr.hasPrefix("flowctl: \"drucker\" ist keine Option von \"service\" (Optionen: "), "\(option.stderr)")
        let field = run(["set", german, "colour=red"])
        #expect(field.stderr == "flowctl: \"colour\" ist kein Feld von Schritt \"service\" (Felder: service)\n", "\(field.stderr)")
        #expect(run(["set", german, "service=website"]).status == 0)
        #expect(run(["continue", german]).status == 0)
        let number = run(["set", german, "pageCount=viele"])
        #expect(number.stderr == "flowctl: \"viele\" ist keine Zahl (Feld \"pageCount\" erwartet eine Zahl)\n", "\(number.stderr)")

        let japanese = try start("consultation", ["--locale", "ja"])
        let refused = run(["set", japanese, "service=ロゴ"])
        #expect(refused.stderr.hasPrefix("flowctl: \"ロゴ\" は \"service\" の選択肢ではありません（選択肢: "), "\(refused.stderr)")
        let french = try start("consultation", ["--locale", "fr"])
        #expect(run(["set", french, "colour=red"]).stderr.contains("n'est pas un champ de l'étape \"service\""))
    }

    @Test("set warns about a secure value on the command line and reads FIELD=- from standard input")
    func secureValues() throws {
        let id = try start("registration")
        let onCommandLine = run(["set", id, "username=ada", "email=ada@example.com"])
        #expect(onCommandLine.status == 0)
        #expect(run(["continue", id]).status == 0)

        let warned = run(["set", id, "password=correct horse"])
        #expect(warned.stderr.contains("warning"))
        #expect(warned.stderr.contains("password=-"))

        let source = ScriptedSource(["battery staple"], isTerminal: true)
        let out = BufferSink(), err = BufferSink()
        let box = UncheckedBox(service as any FlowService)
        let context = FlowctlContext(stdout: out, stderr: err, stdin: source, makeService: { _, _ in box.value })
        let status = Flowctl.run(["set", id, "confirmPassword=-"], context: context)
        #expect(service.lastAnswers[id] == ["confirmPassword": .string("battery staple")])
        #expect(source.echoFlags == [false], "a secure value is read without echo")
        #expect(!err.text.contains("warning"))
        #expect(err.text.contains("Repeat the password: "), "the prompt names the field")
        #expect(status == 0 || status == 1)

        let ended = run(["set", id, "password=-"], input: [])
        #expect(ended.status == 65)
        #expect(ended.stderr.contains("standard input ended"))
    }

    @Test("continue: errors and exit 1 when it stays; the new step when it moves; --json shape")
    func continueStep() throws {
        let id = try start("consultation")
        let stayed = run(["continue", id])
        #expect(stayed.status == 1)
        #expect(stayed.stderr.hasPrefix("service: "))
        #expect(stayed.stdout.isEmpty)

        let stayedJSON = try #require(try json(run(["continue", id, "--json"]).stdout) as? [String: Any])
        #expect(stayedJSON["moved"] as? Bool == false)
        #expect((stayedJSON["errors"] as? [String: String])?.keys.sorted() == ["service"])

        _ = run(["set", id, "service=app"])
        let moved = run(["continue", id])
        #expect(moved.status == 0)
        #expect(moved.stdout.hasPrefix("Step 2 of 4 · Day and time\n"), "the branch skips the pages step")

        _ = run(["set", id, "day=2025-06-17", "time=09:30"])
        let movedJSON = try #require(try json(run(["continue", id, "--json"]).stdout) as? [String: Any])
        #expect(movedJSON["moved"] as? Bool == true)
        #expect((movedJSON["step"] as? [String: Any])?["id"] as? String == "contact")
    }

    @Test("back follows the path taken; goto refuses unvisited steps")
    func backAndGoTo() throws {
        let id = try start("consultation")
        let first = run(["back", id])
        #expect(first.status == 1, "no Back on the first step: InvalidState")
        _ = run(["set", id, "service=branding"])
        _ = run(["continue", id])
        let back = run(["back", id])
        #expect(back.status == 0)
        #expect(back.stdout.hasPrefix("Step 1 of 4 · Service"))
        let notVisited = run(["goto", id, "contact"])
        #expect(notVisited.status == 1)
        let unknownStep = run(["goto", id, "nosuch"])
        #expect(unknownStep.status == 66)
        #expect(run(["goto", id, "service"]).status == 0)
    }

    /// Walks consultation to Review through the commands.
    private func toReview() throws -> String {
        let id = try start("consultation")
        for assignments in [["service=website"], ["pageCount=3"], ["day=2025-06-17", "time=09:00"],
                            ["name=Ada Lovelace", "email=ada@example.com"]] {
            let set = run(["set", id] + assignments)
            try #require(set.status == 0, "\(assignments): \(set.stderr)")
            let next = run(["continue", id])
            try #require(next.status == 0, "\(assignments): \(next.stderr)")
        }
        return id
    }

    @Test("review shows the groups, Not given, and the note; --json shape")
    func review() throws {
        let id = try toReview()
        let text = run(["review", id])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Website size (pages)"))
        #expect(text.stdout.split(separator: "\n").contains { $0.contains("Phone") && $0.hasSuffix("Not given") })
        #expect(text.stdout.contains("We send a calendar invite"))

        let shape = try #require(try json(run(["review", id, "--json"]).stdout) as? [String: Any])
        #expect(Set(shape.keys) == ["session", "groups", "note"])
        let groups = try #require(shape["groups"] as? [[String: Any]])
        #expect(groups.map { $0["step"] as? String } == ["service", "pages", "when", "contact"])
        #expect(Set(groups[0].keys) == ["step", "title", "finished", "status", "editLabel", "answers"])
        #expect((groups[0]["answers"] as? [[String: String]])?.first?.keys.sorted() == ["display", "field", "label"])

        // show on Review includes the review and says how to submit.
        let show = run(["show", id])
        #expect(show.stdout.contains("Book: flowctl submit \(id)"))
        let showJSON = try #require(try json(run(["show", id, "--json"]).stdout) as? [String: Any])
        #expect(showJSON["review"] is [String: Any])
    }

    @Test("answers prints the answers on the path; --json maps D-Bus values naturally")
    func answers() throws {
        let id = try toReview()
        let text = run(["answers", id])
        #expect(text.stdout.contains("pageCount  3"))
        let parsed = try #require(try json(run(["answers", id, "--json"]).stdout) as? [String: Any])
        #expect(parsed["pageCount"] as? Int == 3)
        #expect(parsed["service"] as? String == "website")
        #expect(parsed["email"] as? String == "ada@example.com")
    }

    @Test("submit: exit 0 and the result; a failure prints its message and exits 1, and may be retried")
    func submit() throws {
        let id = try toReview()
        service.submitFailures = [.localized("The calendar is full.")]
        let failed = run(["submit", id])
        #expect(failed.status == 1)
        #expect(failed.stderr == "✗ The calendar is full.\n")
        let failedJSON = try #require(try json(run(["show", id, "--json"]).stdout) as? [String: Any])
        #expect(failedJSON["state"] as? String == "failed")
        #expect(failedJSON["lastError"] as? String == "The calendar is full.")

        service.submitFailures = [.other]
        let shape = try #require(try json(run(["submit", id, "--json"]).stdout) as? [String: Any])
        #expect(shape["submitted"] as? Bool == false)
        #expect(shape["errorName"] as? String == "org.flowd.Flow1.Error.SubmitFailed")
        #expect(shape["error"] as? String == "Couldn't send this. Try again.")

        let done = run(["submit", id])
        #expect(done.status == 0)
        #expect(done.stdout.contains("✓ Submitted"))
        #expect(done.stdout.contains("Booked. Watch your inbox"))
        #expect(done.stderr.isEmpty, "no spinner when standard error is not a terminal")
        let again = try #require(try json(run(["submit", id, "--json"]).stdout) as? [String: Any])
        #expect(again["submitted"] as? Bool == true, "submitting a submitted session does nothing and succeeds")
    }

    @Test("submit with an unfinished step moves there and says so once; without Review, how such a flow ends")
    func submitUnfinished() throws {
        let id = try start("consultation")
        let submit = run(["submit", id])
        #expect(submit.status == 1)
        #expect(submit.stderr == "✗ “Service” is not finished yet. See it with: flowctl show \(id)\n")
        // In the person's language, the command included (no English "see" tacked on).
        let german = run(["submit", id], environment: ["LANG": "de_DE.UTF-8"])
        #expect(german.stderr.hasPrefix("✗ „"), "\(german.stderr)")
        #expect(german.stderr.hasSuffix("“ ist noch nicht fertig. Anzeigen mit: flowctl show \(id)\n"), "\(german.stderr)")

        // onboarding has no Review page; sitting on its last step, "terms", with the terms not accepted.
        let onboarding = try start("onboarding")
        _ = run(["set", onboarding, "plan=free"])
        _ = run(["continue", onboarding])
        _ = run(["set", onboarding, "reminderDays=mon"])
        _ = run(["continue", onboarding])
        let last = run(["submit", onboarding])
        #expect(last.status == 1)
        let lines = last.stderr.split(separator: "\n").map(String.init)
        #expect(lines == [
            "✗ “Terms of service” is not finished yet. See it with: flowctl show \(onboarding)",
            "Flow “onboarding” has no Review page: 'flowctl continue \(onboarding)' on its last step, “Terms of service”, submits it.",
        ])
        #expect(last.stderr.components(separatedBy: "not finished").count == 2, "said once")
        let shape = try #require(try json(run(["submit", onboarding, "--json"]).stdout) as? [String: Any])
        #expect(shape["step"] as? String == "terms")
        #expect(shape["errorName"] as? String == "org.flowd.Flow1.Error.ValidationFailed")
    }

    @Test("cancel and close print nothing; a closed session is gone")
    func cancelAndClose() throws {
        let id = try start("survey")
        let cancel = run(["cancel", id])
        #expect(cancel.status == 0 && cancel.stdout.isEmpty && cancel.stderr.isEmpty)
        let close = run(["close", id])
        #expect(close.status == 0 && close.stdout.isEmpty)
        #expect(run(["show", id]).status == 66)
    }

    @Test("plugins: name, kinds, version, status and reason; --json shape")
    func plugins() throws {
        let text = run(["plugins"])
        #expect(text.stdout.hasPrefix("NAME"))
        #expect(text.stdout.contains("broken") && text.stdout.contains("failed") && text.stdout.contains("ABI 2"))
        let parsed = try #require(try json(run(["plugins", "--json"]).stdout) as? [[String: Any]])
        #expect(parsed.count == 2)
        #expect(Set(parsed[0].keys) == ["name", "version", "kinds", "capabilities", "path", "status", "error"])
    }

    @Test("status: version, uptime, sessions by state, flows refused with why, plugins, limits, state; --json shape")
    func status() throws {
        _ = try start("survey")
        _ = try start("survey")
        let text = run(["status"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("Version") && $0.hasSuffix("0.1.1") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("Uptime") && $0.contains("(since 2025-11-24 ") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("Sessions") && $0.hasSuffix("2: editing 2") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("Flows") && $0.hasSuffix("1 served: trip") })
        #expect(lines.contains { $0.hasSuffix("/etc/flowd/flows/bad.json: $.steps: expected an array") })
        #expect(lines.contains { $0.hasPrefix("Plugins") && $0.hasSuffix("1 loaded, 1 failed, 0 disabled") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasSuffix("/p/broken.so: ABI 2 is not the daemon's ABI 1") })
        #expect(lines.contains { $0.hasPrefix("Limits") && $0.hasSuffix("IdleTimeout=7d MaxSessionsPerUser=64") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("State") && $0.hasSuffix("/var/lib/flowd, 1.2 MB") }, "\(text.stdout)")

        let parsed = try #require(try json(run(["status", "--json"]).stdout) as? [String: Any])
        #expect(Set(parsed.keys) == [
            "version", "startedAt", "uptimeSeconds", "sessions", "flows", "refusedFlows", "plugins", "failedPlugins",
            "limits", "stateDirectory", "stateBytes",
        ])
        #expect(parsed["sessions"] as? [String: Int] == ["editing": 2])
        #expect((parsed["uptimeSeconds"] as? Int ?? -1) > 0)
    }

    @Test("reload: says it reloaded, the flows served, added and gone, the files refused; --json shape")
    func reload() throws {
        service.reloadOutcome = .success(["survey", "trip-v2"])
        let text = run(["reload"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(service.calls.suffix(3) == ["GetStatus", "Reload", "GetStatus"], "the status before and after")
        #expect(text.stdout == """
            ✓ flowd re-read its configuration and flows.
            Flows served (2): survey, trip-v2
            Added: survey, trip-v2
            No longer served: trip
            Flow files refused (1):
              /etc/flowd/flows/bad.json: $.steps: expected an array

            """, "\(text.stdout)")
        let german = run(["reload"], environment: ["LANG": "de_DE.UTF-8"])
        #expect(german.stdout.hasPrefix("✓ flowd hat seine Konfiguration und Formulare neu eingelesen.\nAngebotene Formulare (2)"))
        #expect(!german.stdout.contains("Added"), "nothing changed the second time: \(german.stdout)")

        let parsed = try #require(try json(run(["reload", "--json"]).stdout) as? [String: Any])
        #expect(Set(parsed.keys) == ["reloaded", "flows", "added", "removed", "refusedFlows"])
        #expect(parsed["flows"] as? [String] == ["survey", "trip-v2"] && parsed["added"] as? [String] == [])
        #expect((parsed["refusedFlows"] as? [[String: String]])?.first?["file"] == "/etc/flowd/flows/bad.json")
    }

    @Test("reload refused or failed: flowd's reason, exit 77 for a refusal, 1 for a configuration error; nothing printed")
    func reloadRefused() throws {
        service.reloadOutcome = .failure(EngineService.refusal(
            .accessDenied, "not authorized to reload flowd (polkit action org.flowd.Flow1.reload)"))
        let denied = run(["reload"])
        #expect(denied.status == 77 && denied.stdout.isEmpty)
        #expect(denied.stderr == "flowctl: flowd was not reloaded: not authorized to reload flowd (polkit action org.flowd.Flow1.reload)\n")
        service.reloadOutcome = .failure(EngineService.refusal(
            .failed, "the configuration has an error, nothing was changed: /etc/flowd/flowd.conf:3: unknown key Foo"))
        let failed = run(["reload"])
        #expect(failed.status == 1 && failed.stdout.isEmpty)
        #expect(failed.stderr.contains("flowd was not reloaded: the configuration has an error") && failed.stderr.contains("flowd.conf:3"))
        let challenge = DBusError(.interactiveAuthorizationRequired, "authentication is required to reload flowd")
        service.reloadOutcome = .failure(FlowClientError(challenge, member: FlowMember.Manager.reload))
        let required = run(["reload", "--no-ask-password"], terminal: true)
        #expect(required.status == 77 && required.stderr.contains("Authentication is required: run flowctl on a terminal"))
        // On a terminal the call let polkit ask: refused all the same, no agent could.
        let unasked = run(["reload"], terminal: true)
        #expect(unasked.status == 77 && unasked.stderr.contains("no authentication agent could ask for the password"), "\(unasked.stderr)")
        #expect(required.status == 77 && required.stderr.contains("Authentication is required"), "\(required.stderr)")
    }

    @Test func durationsAndSizesReadEasily() {
        #expect(Render.duration(seconds: 0) == "0 s")
        #expect(Render.duration(seconds: 59) == "59 s")
        #expect(Render.duration(seconds: 3_725) == "1 h 2 min")
        #expect(Render.duration(seconds: 2 * 86400 + 7200 + 5) == "2 d 2 h")
        #expect(Render.bytes(999) == "999 B")
        #expect(Render.bytes(1_234_567) == "1.2 MB")
        #expect(Render.bytes(1000) == "1.0 kB")
    }

    @Test("watch prints the session's changes until it is submitted; --json gives JSON lines")
    func watch() throws {
        let id = try toReview()
        service.queuedEvents[id] = [
            .session(id, .announcement(text: "Submitting")),
            .propertiesChanged(session: id, [.state: .string("submitting")]),
            .session(id, .submitted(receipt: ["reference": .string("R-1")])),
            .propertiesChanged(session: id, [.state: .string("submitted"), .currentStep: .string("complete")]),
            .session(id, .announcement(text: "Submitted")),
        ]
        let text = run(["watch", id])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "changed CurrentStep=review State=review")
        #expect(lines.contains("announcement: Submitting"))
        #expect(lines.contains("submitted: reference=R-1"))
        #expect(lines.suffix(2) == ["changed CurrentStep=complete State=submitted", "announcement: Submitted"],
                "the signals that follow the settling change are shown too")

        let id2 = try toReview()
        service.queuedEvents[id2] = [
            .session(id2, .stepCompleted(step: "contact", answers: ["name": .string("Ada")])), .manager(.sessionRemoved(id: id2)),
        ]
        let jsonLines = run(["watch", id2, "--json"]).stdout.split(separator: "\n")
        #expect(jsonLines.count == 3)
        let events = try jsonLines.map { try #require(try json(String($0)) as? [String: Any]) }
        #expect(events.map { $0["event"] as? String } == ["PropertiesChanged", "StepCompleted", "SessionRemoved"])
        #expect(events.allSatisfy { $0["session"] as? String == id2 })
        #expect((events[1]["answers"] as? [String: String]) == ["name": "Ada"])
    }

    @Test("watch on a submitted session prints its state and ends")
    func watchSettled() throws {
        let id = try toReview()
        _ = run(["submit", id])
        service.queuedEvents[id] = []
        let watch = run(["watch", id])
        #expect(watch.status == 0)
        #expect(watch.stdout == "changed CurrentStep=complete State=submitted\n")
    }

    @Test("no daemon: exit 69 with how to start it, for every command that needs it")
    func noDaemon() {
        let absent = AbsentService()
        for arguments in [["flows"], ["sessions"], ["start", "x"], ["plugins"], ["show", String(repeating: "0", count: 32)],
                          ["run", "x"]] {
            let run = flowctl(arguments, service: absent)
            #expect(run.status == 69, "\(arguments)")
            #expect(run.stderr == "flowctl: flowd is not running on the session bus. Start it with: systemctl --user start flowd\n")
        }
        // check works offline.
        #expect(flowctl(["check", Repository.flowsDirectory + "/survey.json"], service: absent).status == 0)
    }

    @Test("check lints files offline with the daemon's loader")
    func check() throws {
        let directory = try TemporaryFiles()
        let bad = try directory.write("bad.json", #"{"format": 1, "id": "x", "title": "X", "steps": [{"id": "a", "title": "A", "fields": [{"id": "f", "label": "F", "type": "emial"}]}]}"#)
        let good = Repository.flowsDirectory + "/consultation.json"
        let result = run(["check", good, bad, directory.path + "/missing.json"])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("\(good): ok (flow consultation)"))
        #expect(lines.contains { $0.hasPrefix("\(bad): steps[0].fields[0].type: unknown type \"emial\"") })
        #expect(lines.contains("\(directory.path)/missing.json: cannot read: No such file or directory"))
        #expect(run(["check", good]).status == 0)

        let parsed = try #require(try json(run(["check", "--json", good, bad]).stdout) as? [[String: Any]])
        #expect(parsed.map { $0["ok"] as? Bool } == [true, false])
        #expect(parsed[0]["flow"] as? String == "consultation")
        let problem = try #require((parsed[1]["problems"] as? [[String: String]])?.first)
        #expect(problem["path"] == "steps[0].fields[0].type")
        #expect(service.calls.isEmpty, "check never calls the daemon")
    }

    @Test("check cannot know flowd's plugins: a flow naming a missing one passes, and the help says flowd checks them")
    func checkPluginNames() throws {
        let directory = try TemporaryFiles()
        let file = try directory.write("nosuch.json", """
            {"format": 1, "id": "nosuch", "title": "N", "submit": {"action": "flowd.nosuch"}, "steps": [
              {"id": "a", "title": "A", "fields": [
                {"id": "f", "type": "text", "label": "F", "validators": [{"plugin": "flowd.nosuch"}]}]}]}
            """)
        let result = run(["check", file])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout == "\(file): ok (flow nosuch)\n")
        let help = run(["check", "--help"]).stdout
        #expect(help.contains("checked when flowd loads"), "\(help)")
    }

    @Test("check --plugin-dir loads the plugins there as flowd does and checks the names and options a flow gives them")
    func checkAgainstPlugins() throws {
        let directory = try TemporaryFiles()
        let plugins = directory.path + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let built = BuildProducts.directory(holding: "libSpoolPlugin.so") + "/libSpoolPlugin.so"
        try FileManager.default.copyItem(atPath: built, toPath: plugins + "/spool.so")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: plugins + "/spool.so")
        func flow(_ id: String, _ submit: String) throws -> String {
            try directory.write("\(id).json", #"{"format": 1, "id": "\#(id)", "title": "T", "steps": [{"id": "a", "title": "A", "kind": "content"}], "submit": \#(submit)}"#)
        }
        let good = try flow("good", #"{"action": "flowd.spool", "options": {"includeSecure": true}}"#)
        let typo = try flow("typo", #"{"action": "flowd.spool", "options": {"directroy": "/tmp"}}"#)
        let missing = try flow("missing", #"{"action": "flowd.command", "options": {"path": "/bin/true"}}"#)

        let result = run(["check", "--plugin-dir", plugins, good, typo, missing])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "\(good): ok (flow good)",
                #"\#(typo): submit.options.directroy: flowd.spool has no option "directroy" (did you mean "directory"?)"#,
                #"\#(missing): submit.action: no loaded plugin provides the submit action "flowd.command" (available: flowd.spool)"#,
            ], "\(lines)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // Without --plugin-dir the same files pass: the plugins are not known.
        #expect(run(["check", good, typo, missing]).status == 0)
        // A plugin directory that is not there is said, and nothing is provided.
        let absent = run(["check", "--plugin-dir", directory.path + "/nosuch", good])
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("plugin directory \(directory.path)/nosuch: does not exist"), "\(absent.stderr)")
    }

    @Test("__complete: candidates for the shell, one per line, and nothing when flowd is absent")
    func completions() throws {
        #expect(run(["__complete", "flows"]).stdout == service.flows.keys.sorted().map { $0 + "\n" }.joined())
        let id = try start("consultation")
        #expect(run(["__complete", "sessions"]).stdout == id + "\n")
        #expect(run(["__complete", "fields", String(id.prefix(5))]).stdout == "service=\nservice.other=\n")
        #expect(run(["__complete", "values", id, "service"]).stdout == "website\napp\nbranding\nother\n")
        #expect(run(["__complete", "values", id, "nosuch"]).stdout.isEmpty)
        #expect(run(["__complete", "steps", id]).stdout == "service\nreview\n")
        let absent = flowctl(["__complete", "sessions"], service: AbsentService())
        #expect(absent.status == 0 && absent.stdout.isEmpty && absent.stderr.isEmpty)
        #expect(!FlowctlCommandLine.overview().contains("__complete"), "not in the help: it is for programs")
    }

    @Test("--version and help need no daemon")
    func offlineInfo() {
        let absent = AbsentService()
        #expect(flowctl(["--version"], service: absent).stdout == "flowctl \(FlowdVersion.current)\n")
        let help = flowctl(["help", "submit"], service: absent)
        #expect(help.status == 0 && help.stdout.contains("Usage: flowctl [OPTIONS] submit SESSION"))
    }
}

/// A temporary directory for test files, removed on deinit.
final class TemporaryFiles {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "flowctl-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}
