import Foundation
import TestSupport
import Testing

/// The wizard as a person meets it (issue 14): the built flowctl on a
/// terminal against a real flowd serving the shipped flows with the shipped
/// plugins, wrong input first.
@Suite("the wizard a person can trust", .serialized)
struct WizardTrustTests {
    private func answers(_ flowd: DaemonFixture, _ id: String) throws -> [String: Any] {
        let result = try flowd.flowctl(["answers", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    private func onlySession(_ flowd: DaemonFixture) throws -> String {
        try #require(try flowd.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").first.map(String.init))
    }

    @Test("a refused answer: its label again, what flowd holds, and Enter never keeps it")
    func refusedAnswerIsNotKept() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "registration"])
        #expect(t.waitFor("Username *"))
        #expect(t.waitFor("> "))
        t.type("admin")
        #expect(t.waitFor("Email *"))
        #expect(t.waitFor("> "))
        t.type("ada@example.org")
        #expect(t.waitFor("e: "))
        #expect(t.waitFor("> "))
        t.type("e")
        #expect(t.waitFor("[admin]"))
        t.type("root")
        #expect(t.waitFor("✗ The user name “root” is already taken."))
        // Asked again: the label, and flowd's answer as refused, not as the one Enter keeps.
        let reprompt = try #require(t.drawn(until: "> "))
        #expect(reprompt.contains("Username"), "\(reprompt)")
        #expect(reprompt.contains("root"), "what flowd holds now: \(reprompt)")
        #expect(!reprompt.contains("[admin]") && !reprompt.contains("[root]"), "\(reprompt)")
        t.type("")
        // Enter does not keep the refused value: the field is asked again.
        let again = try #require(t.drawn(until: "> "))
        #expect(again.contains("already taken"), "\(again)")
        #expect(!again.contains("Email"), "Enter moved on with a refused answer: \(again)")
        t.type("ada")
        #expect(t.waitFor("[ada@example.org]"))
        t.type("")
        #expect(t.waitFor("Enter: Continue"))
        #expect(try answers(flowd, try onlySession(flowd))["username"] as? String == "ada")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }

    @Test("a refused number: Enter does not leave the field with it; an optional field's refused value is dropped")
    func refusedNumberAndOptional() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "consultation"])
        #expect(t.waitFor("What can we help with? *"))
        #expect(t.waitFor("> "))
        t.type("1")
        #expect(t.waitFor("Enter: Continue"))
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("A website: about how many pages? *"))
        #expect(t.waitFor("> "))
        t.type("2.5")
        #expect(t.waitFor("✗ "))
        #expect(t.waitFor("> "))
        t.type("")
        let again = try #require(t.drawn(until: "> "))
        #expect(again.contains("✗ "), "the refusal is said again: \(again)")
        #expect(!again.contains("Enter: Continue"), "Enter left the field with 2.5: \(again)")
        t.type("12")
        #expect(t.waitFor("Enter: Continue"))
        #expect(t.waitFor("> "))
        t.type("")
        // Day and time, then the contact details with the optional phone.
        #expect(t.waitFor("Day *"))
        #expect(t.waitFor("> "))
        t.type("1")
        #expect(t.waitFor("Time *"))
        #expect(t.waitFor("> "))
        t.type("1")
        #expect(t.waitFor("Enter: Continue"))
        #expect(t.waitFor("> "))
        t.type("")
        // The name is prefilled (flowd.real-name), so the email is asked first.
        #expect(t.waitFor("Email *"))
        #expect(t.waitFor("> "))
        t.type("ada@example.org")
        #expect(t.waitFor("Phone"))
        #expect(t.waitFor("> "))
        t.type("call me")
        #expect(t.waitFor("✗ Enter a phone number"))
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("Enter: Continue"))
        let id = try onlySession(flowd)
        let held = try answers(flowd, id)
        #expect(held["pageCount"] as? Int == 12)
        #expect(held["phone"] == nil || held["phone"] as? String == "", "the refused phone was kept: \(held)")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }

    @Test("Other with an empty text: only the text is asked again, with its label")
    func otherTextAskedAgain() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "consultation"])
        #expect(t.waitFor("4) Something else"))
        #expect(t.waitFor("> "))
        t.type("4")
        #expect(t.waitFor("Something else"))
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("✗ "))
        let again = try #require(t.drawn(until: "> "))
        #expect(again.contains("Something else"), "the Other text's label: \(again)")
        #expect(!again.contains("1) A website"), "the choice was asked again: \(again)")
        t.type("A kiosk")
        #expect(t.waitFor("Enter: Continue"))
        let held = try answers(flowd, try onlySession(flowd))
        #expect(held["service"] as? String == "other")
        #expect(held["service.other"] as? String == "A kiosk")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }
}

/// Submitting as a person lives it: cancel while sending, Ctrl-C, failure.
@Suite("the wizard's submit", .serialized)
struct WizardSubmitTests {
    /// One step and Review; the submit is `action` with `options`.
    static func flow(_ id: String, action: String, options: String = "{}") -> String {
        """
        {"format": 1, "id": "\(id)", "title": "Send \(id)",
         "steps": [{"id": "one", "title": "One", "fields": [{"id": "name", "type": "text", "label": "Name", "required": true}]}],
         "review": {"title": "Review", "submitTitle": "Send to the help desk"},
         "submit": {"action": "\(action)", "options": \(options), "timeoutSeconds": 120}}
        """
    }

    private func fixture() throws -> DaemonFixture {
        try DaemonFixture(
            flows: [
                "slow.json": Self.flow("slow", action: "test.slow-submit", options: #"{"seconds": 60}"#),
                "failing.json": Self.flow("failing", action: "test.fail-submit"),
            ],
            plugins: ["FixtureTestPlugin"])
    }

    /// Runs `flow` to Review and presses Enter there: the submit starts.
    private func submitting(_ flowd: DaemonFixture, _ flow: String) throws -> PseudoTerminal {
        let t = try flowd.terminal([ "run", flow], environment: ["NO_COLOR": "1"])
        #expect(t.waitFor("Name *"))
        #expect(t.waitFor("> "))
        t.type("Ada")
        #expect(t.waitFor("Enter: Continue"))
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("Enter: Send to the help desk"))
        #expect(t.waitFor("> "))
        t.type("")
        return t
    }

    private func state(_ flowd: DaemonFixture) throws -> String? {
        let id = try #require(try flowd.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").first.map(String.init))
        let show = try flowd.flowctl(["show", id, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(show.standardOutput.utf8)) as? [String: Any]
        return object?["state"] as? String
    }

    @Test("while sending, c cancels the submit: not sent, and Review offers Submit again")
    func cancelWhileSending() throws {
        let flowd = try fixture()
        let t = try submitting(flowd, "slow")
        #expect(t.waitFor("Sending…"))
        #expect(t.waitFor("c: Cancel"), "the spinner offers to cancel")
        #expect(try state(flowd) == "submitting")
        t.type("c")
        #expect(t.waitFor("Not sent"))
        #expect(t.waitFor("Enter: Send to the help desk"), "the key to submit again")
        #expect(try state(flowd) != "submitting")
        #expect(try state(flowd) != "submitted")
        t.type("q")
        #expect(t.wait() == .exited(0), "\(t.text)")
    }

    @Test("Ctrl-C while sending says the submit is still running and offers to cancel it")
    func interruptWhileSending() throws {
        let flowd = try fixture()
        let t = try submitting(flowd, "slow")
        #expect(t.waitFor("Sending…"))
        t.interrupt()
        #expect(t.waitFor("The submit is still running in flowd."))
        #expect(t.waitFor("c: Cancel"))
        #expect(t.waitFor("> "))
        #expect(!t.text.contains("is saved"), "it does not pretend the session is merely saved")
        t.type("c")
        #expect(t.waitFor("Not sent"))
        #expect(try state(flowd) != "submitting")
        t.interrupt()
        #expect(t.waitFor("is saved. Resume it with"))
        #expect(t.wait() == .exited(130))
    }

    @Test("Ctrl-C twice while sending leaves, saying the submit goes on; it does")
    func leaveWhileSending() throws {
        let flowd = try fixture()
        let t = try submitting(flowd, "slow")
        #expect(t.waitFor("Sending…"))
        t.interrupt()
        #expect(t.waitFor("The submit is still running in flowd."))
        t.interrupt()
        #expect(t.waitFor("the submit goes on in flowd"))
        #expect(t.wait() == .exited(130), "\(t.text)")
        #expect(try state(flowd) == "submitting")
    }

    @Test("a failed submit: the message next to the prompt, and the key reads Try again")
    func failedSubmit() throws {
        let flowd = try fixture()
        let t = try submitting(flowd, "failing")
        let after = try #require(t.drawn(until: "> "))
        #expect(after.contains("✗ The calendar is full."), "\(after)")
        #expect(after.contains("Enter: Try again"), "\(after)")
        #expect(!after.contains("Review") && !after.contains("Name  "), "Review is not drawn again above the message: \(after)")
        // The message is the last thing before the action line and the prompt.
        let lines = after.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(lines.suffix(3).first?.hasPrefix("✗ ") == true, "\(lines)")
        t.type("q")
        #expect(t.wait() == .exited(0))
    }
}
