import DBus
import FlowCLI
import FlowClient
import FlowProtocol
import Testing

/// The interactive wizard driven line by line (no terminal): the prompts it
/// shows, the calls it makes and where the session ends up.
@Suite("Wizard")
struct WizardTests {
    let service: EngineService

    init() throws {
        service = try EngineService()
    }

    private func wizard(_ arguments: [String], _ lines: [String]) -> (Run, ScriptedSource) {
        let out = BufferSink(), err = BufferSink()
        let source = ScriptedSource(lines, isTerminal: true)
        let box = UncheckedBox(service as any FlowService)
        let context = FlowctlContext(stdout: out, stderr: err, stdin: source, makeService: { _, _ in box.value })
        let status = Flowctl.run(arguments, context: context)
        return (Run(status: status, stdout: out.text, stderr: err.text), source)
    }

    private var onlySession: String? { service.sessions.keys.first }

    /// A command other than the wizard, with no input.
    private func runCommand(_ arguments: [String]) -> Run { wizard(arguments, []).0 }

    @Test("consultation end to end: inline errors fixed, Back, Review with Edit, Submit")
    func consultation() async throws {
        let (run, source) = wizard(["run", "consultation"], [
            "9",            // not an option: the wizard says which numbers exist
            "1",            // A website
            "",             // Continue
            "many",         // not a number
            "0",            // the daemon: below the minimum
            "12",
            "b",            // Back to Service…
            "",             // …where the answer is kept: Continue
            "",             // pages is answered already: Continue
            "1", "2",       // day, time
            "",             // Continue
            "Ada Lovelace", "not-an-email", "ada@example.com", "",   // contact (phone left empty)
            "",             // Continue to Review
            "2",            // Edit "Website size"
            "e", "20",      // change the answers: 20 pages
            "",             // Back to review
            "",             // Book
        ])
        #expect(run.status == 0, "\(run.stderr)\n\(run.stdout)")
        #expect(source.remaining.isEmpty)
        let out = run.stdout
        #expect(out.hasPrefix("Book a consultation\n"))
        #expect(out.contains("Step 1 of 4 · Service"))
        #expect(out.contains("  1) A website\n  2) A desktop app\n  3) Branding\n  4) Something else\n"))
        #expect(out.contains("✗ Choose a number from 1 to 4."))
        #expect(out.contains("Step 2 of 5 · Website size"), "choosing a website adds a step to the path")
        #expect(out.contains("✗ Enter a number."))
        // The daemon's own message for 0, under the field, then the prompt again.
        let notANumber = try #require(out.range(of: "✗ Enter a number."))
        let minimum = try #require(out.range(of: "  ✗ ", range: notANumber.upperBound..<out.endIndex))
        let message = out[minimum.upperBound...].prefix { $0 != "\n" }
        #expect(message.contains("1"), "the daemon's minimum message: \(message)")
        #expect(out.contains("What can we help with?: A website"), "after Back the kept answer is shown")
        #expect(out.contains("Enter: Back to review"), "after Edit, Continue returns to Review")
        #expect(out.contains("Not given"), "the empty phone number on Review")
        #expect(out.contains("✓ Submitted"))
        #expect(out.contains("Booked. Watch your inbox for the invite."))

        let id = try #require(onlySession)
        #expect(service.sessions[id]?.state.rawValue == "submitted")
        #expect(try await service.answers(id)["pageCount"] == .int64(20))
        #expect(service.calls.contains("Back"))
        #expect(service.calls.contains("GoTo(pages)"))
        #expect(service.calls.filter { $0 == "Submit" }.count == 1)
    }

    @Test("an optional field says how to skip it, and once answered that Enter keeps it and :clear removes it; an example is not an answer")
    func optionalClearAndExample() async throws {
        let (run, source) = wizard(["run", "consultation"], [
            "1", "",                    // A website, Continue
            "12", "",                   // pages, Continue
            "1", "2", "",               // day, time, Continue
            "Ada", "ada@example.com", "+49 30 1234",
            "e",                        // change the answers…
            "", "",                     // …name and email kept
            ":clear",                   // …the phone removed
            "",                         // Continue to Review
            "q",
        ])
        #expect(run.status == 0, "\(run.stderr)\n\(run.stdout)")
        #expect(source.remaining.isEmpty)
        let out = run.stdout
        // Unanswered: the example is its own line, the prompt bare; Enter skips.
        #expect(out.contains("at most 254 characters\ne.g. name@example.com\n> "), "\(out)")
        #expect(out.contains("Phone (optional)\nDigits, spaces and an optional leading +\nat most 32 characters\nOptional: Enter leaves it empty.\n> "))
        // Answered: the answer in brackets on the prompt, no example; Enter keeps it, :clear removes it.
        #expect(out.contains("Email *\nWe send the calendar invite here.\nat most 254 characters\n[ada@example.com] > "))
        #expect(out.contains(
            "Phone (optional)\nDigits, spaces and an optional leading +\nat most 32 characters\nOptional: Enter keeps this answer; :clear removes it.\n[+49 30 1234] > "),
            "\(out)")
        let id = try #require(onlySession)
        let answers = try await service.answers(id)
        #expect(answers["email"] == .string("ada@example.com"))
        #expect(answers["phone"] == nil || answers["phone"] == .string(""), "\(answers)")
    }

    @Test("the flow's description before the first step; resuming a submitted session gives its result and reference, no instructions")
    func descriptionAndSubmittedResume() throws {
        let (run, _) = wizard(["run", "consultation"], [
            "1", "", "12", "", "1", "2", "", "Ada", "ada@example.com", "", "", "",
        ])
        #expect(run.status == 0, "\(run.stderr)\n\(run.stdout)")
        #expect(run.stdout.hasPrefix(
            "Book a consultation\nTell us what you need and pick a time that suits you.\nAnswer each question"),
            "\(run.stdout.prefix(200))")
        let id = try #require(onlySession)
        #expect(service.sessions[id]?.state.rawValue == "submitted")

        let (again, _) = wizard(["resume", id], [])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "Book a consultation\n\n✓ Submitted\nBooked. Watch your inbox for the invite.\nReference: R-1\n",
            "\(again.stdout)")
        #expect(!again.stdout.contains("Answer each question"), "\(again.stdout)")
        #expect(!again.stdout.contains("Step 1 of"))
    }

    @Test("a flow without the session's language says so once, in that language; one with it says nothing")
    func languageMissing() throws {
        let (japanese, _) = wizard(["run", "registration", "--locale", "ja"], [":quit"])
        #expect(japanese.status == 0, "\(japanese.stderr)")
        let notice = "このフローは日本語に対応していません。英語で表示します。"
        #expect(japanese.stdout.hasPrefix("Create an account\n" + notice + "\n"), "\(japanese.stdout.prefix(300))")
        #expect(japanese.stdout.components(separatedBy: notice).count == 2, "once")

        let (french, _) = wizard(["run", "consultation", "--locale", "fr-CA"], [":quit"])
        #expect(!french.stdout.contains("n'existe pas en"), "\(french.stdout.prefix(300))")
        let (onboarding, _) = wizard(["run", "onboarding", "--locale", "fr"], [":quit"])
        #expect(onboarding.stdout.contains("Ce formulaire n'existe pas en français ; il est affiché en anglais."),
            "\(onboarding.stdout.prefix(300))")
    }

    @Test("past 9 options the numbers are right-aligned, so the labels line up")
    func manyOptions() throws {
        let options = (1...12).map { #"{"id": "o\#($0)", "label": "Slot \#($0)"}"# }.joined(separator: ", ")
        try service.add("""
            {"format": 1, "id": "many", "title": "Many", "steps": [
              {"id": "one", "title": "One", "fields": [
                {"id": "slot", "type": "choice", "label": "Slot", "required": true, "options": [\(options)]}]}]}
            """)
        let (run, _) = wizard(["run", "many"], [":quit"])
        #expect(run.stdout.contains("Slot *\n   1) Slot 1\n   2) Slot 2\n"), "\(run.stdout)")
        #expect(run.stdout.contains("\n   9) Slot 9\n  10) Slot 10\n  11) Slot 11\n  12) Slot 12\n"), "\(run.stdout)")
    }

    @Test("secure fields are read without echo; a step rule's error sends the person back to the fields")
    func registration() throws {
        let (run, source) = wizard(["run", "registration"], [
            "ada", "ada@example.com", "",
            "correct horse battery", "something else",   // the passwords differ: said under the field…
            "correct horse battery", "",                  // …and fixed
            "y", "",
            "",            // Create account
        ])
        #expect(run.status == 0, "\(run.stdout)")
        #expect(source.remaining.isEmpty)
        // Reads 4 to 6 are the password prompts (the repeat asked twice).
        let flags = source.echoFlags
        #expect(flags[3...5] == [false, false, false])
        #expect(flags[0] == true && flags[2] == true && flags[6] == true)
        // The equals rule is said up front, under the label.
        let mismatch = try #require(run.stdout.range(of: "Repeat the password *\nMust match Password\n> "))
        // The refusal, the label again, what flowd holds (masked), and the prompt without a kept value.
        #expect(run.stdout[mismatch.upperBound...].hasPrefix(
            "  ✗ The passwords do not match.\nRepeat the password *\nCurrent answer: •••••••• (not accepted)\n> \n"),
            "\(run.stdout[mismatch.upperBound...].prefix(200))")
        #expect(!run.stdout.contains("correct horse"), "a secret never reaches the screen")
        #expect(run.stdout.contains("(yes/no)"))
    }

    @Test("the rules flowd says up front are said before the prompt: a pattern's hint, a step rule's hint; show lists them")
    func ruleHints() throws {
        try service.add("""
            {"format": 1, "id": "hinted", "title": "Hinted", "steps": [
              {"id": "one", "title": "One", "fields": [
                {"id": "code", "type": "text", "label": "Code", "required": true,
                 "pattern": "[A-Z]+", "patternHint": "Capital letters only"},
                {"id": "again", "type": "text", "label": "Code again", "required": true}],
               "rules": [{"equals": ["code", "again"], "message": "The codes differ.", "hint": "The same code once more"}]}]}
            """)
        let (run, _) = wizard(["run", "hinted"], ["ABC", ":quit"])
        #expect(run.stdout.contains("Code *\nCapital letters only\n"), "\(run.stdout)")
        #expect(run.stdout.contains("Code again *\nThe same code once more\n"), "\(run.stdout)")
        let id = try #require(onlySession)
        let show = runCommand(["show", id])
        #expect(show.stdout.contains("Capital letters only"), "\(show.stdout)")
        #expect(show.stdout.contains("The same code once more"), "\(show.stdout)")
    }

    @Test("the built-in strings follow the session's language")
    func german() throws {
        let (run, _) = wizard(["run", "onboarding", "--locale", "de"], ["2", "", ":quit"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("Los geht's\n"))
        #expect(run.stdout.contains("Schritt 1 von 3 · Tarif wählen"))
        #expect(run.stdout.contains("Mit :back geht es zurück"))
        #expect(run.stdout.contains("Eingabe: Weiter"), "the key's name in German too")
        #expect(!run.stdout.contains("Enter:"))
        #expect(run.stdout.contains("q: Beenden"))
        #expect(run.stdout.contains("Schritt 2 von 3 · Erinnerungen"))
        #expect(run.stdout.contains("\nmindestens 1 auswählen\n"), "the rule hint in German")
        #expect(!run.stdout.contains("pick at least"))
        #expect(run.stdout.contains("Sitzung \(try #require(onlySession)) ist gespeichert. Fortsetzen mit: flowctl resume"))
    }

    @Test("quit keeps the session; resume continues where it was left, answers shown")
    func quitAndResume() async throws {
        let (first, _) = wizard(["run", "survey"], ["", "3", ":quit"])
        #expect(first.status == 0)
        let id = try #require(onlySession)
        #expect(first.stdout.contains("Session \(id) is saved. Resume it with: flowctl resume \(id)"))
        let step = try await service.step(id)
        #expect(step.id == "satisfaction")

        let (second, source) = wizard(["resume", String(id.prefix(8))], ["", ":quit"])
        #expect(second.status == 0)
        #expect(source.remaining.isEmpty)
        #expect(second.stdout.contains("How satisfied are you") || second.stdout.contains(": Neither"))
        #expect(second.stdout.contains("Step 3 of"))
    }

    @Test("the end of the input leaves the session saved and exits 1")
    func inputEnds() throws {
        let (run, _) = wizard(["run", "survey"], [""])
        #expect(run.status == 1)
        #expect(run.stdout.contains("The input ended. Session "))
        #expect(onlySession != nil)
    }

    @Test("toggles, multiple choice by numbers and ids, Other with its text")
    func choicesAndToggles() async throws {
        try service.add("""
            {"format": 1, "id": "kinds", "title": "Kinds", "steps": [
              {"id": "one", "title": "One", "fields": [
                {"id": "pick", "type": "choice", "label": "Pick", "required": true,
                 "options": [{"id": "a", "label": "Alpha"}], "other": true},
                {"id": "days", "type": "multichoice", "label": "Days", "required": true,
                 "options": [{"id": "mon", "label": "Monday"}, {"id": "tue", "label": "Tuesday"}, {"id": "wed", "label": "Wednesday"}]},
                {"id": "ok", "type": "toggle", "label": "OK?", "mustBeOn": true}
              ]}]}
            """)
        let (run, _) = wizard(["run", "kinds"], ["2", "A kiosk", "1,wed,7", "1, wed", "maybe", "no", "yes", "", ""])
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.contains("  2) Other"))
        #expect(run.stdout.contains("✗ Choose numbers from 1 to 3, separated by commas."))
        #expect(run.stdout.contains("✗ Answer yes or no."))
        let id = try #require(onlySession)
        let answers = try await service.answers(id)
        #expect(answers["pick"] == .string("other"))
        #expect(answers["pick.other"] == .string("A kiosk"))
        #expect(answers["days"] == .strings(["mon", "wed"]))
        #expect(answers["ok"] == .bool(true))
        // "no" was sent and refused by the daemon (mustBeOn), before "yes".
        #expect(run.stdout.components(separatedBy: "  ✗ ").count >= 4)
    }

    @Test("a failed submit shows its message and Review again; retry succeeds")
    func submitFailure() throws {
        service.submitFailures = [.localized("The calendar is full.")]
        let (run, _) = wizard(["run", "onboarding"], ["1", "", "1", "", "y", "", ""])
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.contains("✗ The calendar is full."))
        #expect(run.stdout.contains("✓ "))
        #expect(service.calls.filter { $0 == "Continue" }.count >= 4)
    }

    @Test("unknown flow: exit 66 and the flows there are")
    func unknownFlow() {
        let (run, _) = wizard(["run", "nosuch"], [])
        #expect(run.status == 66)
        #expect(run.stderr.contains("There is no flow “nosuch” (flows: consultation, device-enrolment"))
        #expect(service.sessions.isEmpty)
    }
}
