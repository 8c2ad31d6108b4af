import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Flow format 2 through flowd over the bus: field conditions, piping,
/// computed values, warnings and answer files, with the real spool plugin
/// writing the submission.
@Suite("Flow format 2 through flowd")
struct Format2Tests {
    static let loan = """
        {"format": 2, "id": "loan", "title": {"en": "Lend a device", "de": "Gerät verleihen"},
         "steps": [
          {"id": "device", "title": {"en": "Device", "de": "Gerät"}, "fields": [
            {"id": "model", "type": "choice", "label": {"en": "Model", "de": "Modell"}, "required": true,
             "options": [{"id": "x1", "label": {"en": "A laptop", "de": "Ein Laptop"}}, {"id": "t2", "label": {"en": "A tablet", "de": "Ein Tablet"}}]},
            {"id": "loan", "type": "toggle", "label": {"en": "This is a loan", "de": "Leihgerät"}},
            {"id": "returnDate", "type": "date", "label": {"en": "Return date", "de": "Rückgabedatum"}, "required": true,
             "visibleIf": {"field": "loan", "equals": true}},
            {"id": "days", "type": "number", "label": {"en": "Days", "de": "Tage"}, "integer": true, "minimum": 1},
            {"id": "fee", "type": "computed", "label": {"en": "Fee", "de": "Gebühr"}, "expr": "days * 25", "display": "{value} €"},
            {"id": "note", "type": "text", "label": {"en": "Note", "de": "Notiz"}}],
           "rules": [{"requiredIf": "note", "if": {"expr": "days > 30"}, "level": "warning",
                      "message": {"en": "A long loan: say why in a note.", "de": "Eine lange Leihe: bitte in einer Notiz begründen."}}],
           "next": [{"if": {"expr": "days > 30"}, "goto": "approval"}, {"goto": "owner"}]},
          {"id": "approval", "title": {"en": "Approval for {model}", "de": "Freigabe für {model}"}, "fields": [
            {"id": "approver", "type": "text", "label": {"en": "Who approves {model}?", "de": "Wer gibt {model} frei?"}, "required": true}]},
          {"id": "owner", "title": {"en": "Owner", "de": "Verantwortlich"}, "fields": [
            {"id": "email", "type": "email", "label": "Email", "required": true}]}],
         "review": {"note": {"en": "For {model|a device}.", "de": "Für {model|ein Gerät}."}},
         "submit": {"action": "flowd.spool"}}
        """

    static let settings = DaemonSettings(flows: ["loan.json": loan], plugins: ["SpoolPlugin"])

    /// The spool files written for `session`: each is named by a submit's
    /// idempotency key, `<session id>-<revision>.json`.
    static func spoolFiles(_ fixture: DaemonFixture, _ session: String) -> [String] {
        let directory = fixture.stateDirectory + "/spool/loan"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(session + "-") && $0.hasSuffix(".json") }.map { directory + "/" + $0 }
    }

    /// The submission the spool plugin wrote for `session`.
    static func spooled(_ fixture: DaemonFixture, _ session: String) throws -> [String: Any] {
        let files = spoolFiles(fixture, session)
        try #require(files.count == 1, "one spool file for the session, not \(files)")
        let data = try Data(contentsOf: URL(fileURLWithPath: files[0]))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("visibleIf: GetStep lists only shown fields, VisibleFields changes at once, a hidden answer is absent from everything and the submission")
    func fieldConditions() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.start("loan")
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            #expect(try await client.step(session).fields.map(\.id) == ["model", "loan", "days", "fee", "note"])
            #expect(try await client.property(.visibleFields, of: session) == .strings(["model", "loan", "days", "fee", "note"]))

            #expect(try await client.setAnswers(session, ["model": "x1", "loan": true]) == [:])
            let shown = await watcher.nextPropertyChange(.visibleFields, of: session)
            #expect(shown == .strings(["model", "loan", "returnDate", "days", "fee", "note"]))
            let returnDate = try #require(try await client.step(session).field("returnDate"))
            #expect(returnDate.required && returnDate.label == "Return date")
            #expect(try await client.continueStep(session) == ["returnDate": "This field is required."])
            #expect(try await client.setAnswers(session, ["returnDate": "2031-07-01", "days": .int64(3)]) == [:])

            // Hidden again: kept, not validated, left out.
            #expect(try await client.setAnswers(session, ["loan": false]) == [:])
            #expect(await watcher.nextPropertyChange(.visibleFields, of: session) == .strings(["model", "loan", "days", "fee", "note"]))
            #expect(try await client.continueStep(session) == [:])
            let completed = try #require(await watcher.nextSignal(of: session) { if case .stepCompleted = $0 { true } else { false } })
            guard case .stepCompleted(let step, let answers) = completed else { return }
            #expect(step == "device")
            #expect(answers["returnDate"] == nil && answers["fee"] == .int64(75), "\(answers)")

            #expect(try await client.setAnswers(session, ["email": "ada@example.org"]) == [:])
            #expect(try await client.continueStep(session) == [:])
            let review = try await client.review(session)
            #expect(review.group("device")?.answers.map(\.field) == ["model", "loan", "days", "fee", "note"])
            #expect(review.group("device")?.display("fee") == "75 €")
            #expect(review.note == "For A laptop.")
            let onPath = try await client.answers(session)
            #expect(onPath["returnDate"] == nil && onPath["fee"] == .int64(75))

            try await client.submit(session)
            let submission = try Self.spooled(fixture, session)
            let submitted = try #require(submission["answers"] as? [String: Any])
            #expect(submitted["returnDate"] == nil, "the hidden answer is not submitted: \(submitted)")
            #expect(submitted["fee"] as? Int == 75, "the computed value is")
            #expect(submitted["loan"] as? Bool == false)
        }
    }

    @Test("piping and a computed value in German; a warning that does not gate, listed apart from errors, announced once")
    func pipingComputedAndWarnings() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "loan", locale: "de", prefill: [:])
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            #expect(try await client.setAnswers(session, ["model": "x1", "days": .int64(40)]) == [:], "a warning is not an error")
            let page = try await client.step(session)
            #expect(page.field("fee")?.display == "1.000 €")
            #expect(page.field("fee")?.value == .int64(1000))
            #expect(page.field("note")?.warning == "Eine lange Leihe: bitte in einer Notiz begründen.")
            #expect(page.field("note")?.error == "")
            #expect(try await client.property(.canContinue, of: session) == true)
            let said = try #require(await watcher.nextSignal(of: session) { if case .announcement = $0 { true } else { false } })
            #expect(said == .announcement(text: "Eine lange Leihe: bitte in einer Notiz begründen."))
            // Set again, the warning stays and is not announced again.
            #expect(try await client.setAnswers(session, ["days": .int64(41)]) == [:])
            let events = try await watcher.drain()
            #expect(!events.contains { if case .session(_, .announcement) = $0 { true } else { false } }, "\(events)")

            #expect(try await client.continueStep(session) == [:], "the warning does not stop Continue")
            let approval = try await client.step(session)
            #expect(approval.id == "approval")
            #expect(approval.title == "Freigabe für Ein Laptop")
            #expect(approval.field("approver")?.label == "Wer gibt Ein Laptop frei?")
            #expect(approval.announcement == "Schritt 2 von 4, Freigabe für Ein Laptop")
        }
    }

    @Test("a real plugin warns: a field validator's warning and a step validator's, none of them gating")
    func pluginWarnings() async throws {
        let flow = """
            {"format": 2, "id": "visit", "title": "Visit", "steps": [
              {"id": "when", "title": "When", "fields": [
                {"id": "day", "type": "date", "label": "Day", "required": true, "validators": [{"plugin": "test.sunday"}]}],
               "rules": [{"plugin": "test.busy-step"}]},
              {"id": "done", "title": "Done", "kind": "content", "body": "Bye."}]}
            """
        try await withDaemon(DaemonSettings(flows: ["visit.json": flow], plugins: ["FixtureTestPlugin"])) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "visit", locale: "de", prefill: [:])
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            #expect(try await client.setAnswers(session, ["day": "2000-01-01"]) == ["day": "That is in the past."])
            #expect(try await client.setAnswers(session, ["day": "2030-06-02"]) == [:], "a warning is not an error")
            let warned = "Das ist ein Sonntag; da haben wir geschlossen."
            #expect(try await client.step(session).field("day")?.warning == warned)
            let said = await watcher.nextSignal(of: session) { $0 == .announcement(text: warned) }
            #expect(said != nil, "the warning is announced")
            #expect(try await client.continueStep(session) == [:], "neither warning stops Continue")
            #expect(try await client.property(.currentStep, of: session) == "done")
            try await client.back(session)
            let page = try await client.step(session)
            #expect(page.warning == "We are busy that week.")
            #expect(page.error == "")
            #expect(page.field("day")?.warning == warned, "the field's own warning comes first")
        }
    }

    @Test("StartSession's answers: they choose the branch, stop at the first invalid step, and are refused with the field's name")
    func answerFiles() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            // A long loan goes by the approval step, and ends on Review.
            let long = try await client.startSession(flow: "loan", locale: nil, prefill: [:], answers: [
                "model": "t2", "days": .int64(40), "note": "Conference", "approver": "Grace", "email": "ada@example.org",
            ])
            let properties = try await client.properties(long)
            #expect(properties.currentStep == "review" && properties.state == .review)
            #expect(properties.path.map(\.step) == ["device", "approval", "owner", "review"])
            #expect(try await client.answers(long)["fee"] == .int64(1000))
            // A short one does not, and nothing was submitted: Submit sends it.
            let short = try await client.startSession(flow: "loan", locale: nil, prefill: [:], answers: [
                "model": "t2", "days": .int64(2), "approver": "Grace", "email": "ada@example.org",
            ])
            #expect(try await client.properties(short).path.map(\.step) == ["device", "owner", "review"])
            #expect(try await client.answers(short)["approver"] == nil)
            #expect(Self.spoolFiles(fixture, short).isEmpty)
            try await client.submit(short)
            #expect(try Self.spooled(fixture, short)["answers"] != nil)

            // An invalid step stops the run there, with its errors shown.
            let stopped = try await client.startSession(flow: "loan", locale: nil, prefill: [:], answers: [
                "model": "x1", "days": .int64(2), "email": "not an address",
            ])
            #expect(try await client.property(.currentStep, of: stopped) == "owner")
            #expect(try await client.step(stopped).field("email")?.error.isEmpty == false)
            #expect(try await client.setAnswers(stopped, ["email": "ada@example.org"]) == [:])
            #expect(try await client.continueStep(stopped) == [:], "the session goes on from there")

            // Refused before a session exists, naming the field.
            let count = try await client.sessionCount()
            let unknown = await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try await client.startSession(flow: "loan", locale: nil, prefill: [:], answers: ["modle": "x1"])
            }
            #expect(unknown?.contains("\"modle\" is not a field of flow \"loan\" (did you mean \"model\"?)") == true)
            let wrongType = await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try await client.startSession(flow: "loan", locale: nil, prefill: [:], answers: ["days": "many"])
            }
            #expect(wrongType?.contains("\"days\" is a number field") == true)
            #expect(try await client.sessionCount() == count)
        }
    }

    @Test("an expression with a type error, and a hostile one, refuse their flow with the JSON path; the others are served")
    func expressionLint() async throws {
        let bad = Self.loan.replacingOccurrences(of: #""expr": "days * 25""#, with: #""expr": "days * model""#)
            .replacingOccurrences(of: #""id": "loan""#, with: #""id": "typo""#)
        let deep = String(repeating: "(", count: 400) + "1" + String(repeating: ")", count: 400)
        let hostile = Self.loan.replacingOccurrences(of: #""expr": "days * 25""#, with: "\"expr\": \"\(deep)\"")
            .replacingOccurrences(of: #""id": "loan""#, with: #""id": "hostile""#)
        let settings = DaemonSettings(flows: ["loan.json": Self.loan, "typo.json": bad, "hostile.json": hostile], plugins: ["SpoolPlugin"])
        try await withDaemon(settings) { fixture in
            let served = try await fixture.client.flowIDs()
            #expect(served == ["loan"])
            let log = fixture.daemon.standardError
            #expect(log.contains(#"typo.json: steps[0].fields[4].expr: invalid expression "days * model" at position 6: "*" takes two numbers, not a number and a text"#), "\(log)")
            #expect(log.contains("hostile.json: steps[0].fields[4].expr: invalid expression") && log.contains("nests deeper than 24 levels"), "\(log)")
        }
    }
}
