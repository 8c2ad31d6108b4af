import FlowCLI
import Foundation
import TestSupport
import Testing

/// The shipped flows in German, French and Japanese as a person meets them
/// (issue 14: "no English except what the flow itself lacks"): the built
/// flowctl on a terminal against a real flowd with the shipped plugins.
@Suite("the wizard in a person's language", .serialized)
struct WizardLocaleTests {
    private func answers(_ flowd: DaemonFixture) throws -> [String: Any] {
        let id = try #require(try flowd.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").first.map(String.init))
        let result = try flowd.flowctl(["answers", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    @Test("French: the flow's own description, French punctuation in the keys, a time typed as 14h30")
    func french() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "consultation", "--locale", "fr"], environment: ["NO_COLOR": "1"])
        #expect(t.waitFor("Réserver une consultation"))
        #expect(t.waitFor("Dites-nous ce dont vous avez besoin"), "the description in French: \(t.text)")
        #expect(!t.text.contains("Tell us what you need"), "\(t.text)")
        #expect(t.waitFor("4) Autre chose"))
        #expect(t.waitFor("> "))
        t.type("3")
        #expect(t.waitFor("Entrée : Continuer · e : Modifier les réponses"), "\(t.text)")
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("Jour *"))
        #expect(t.waitFor("> "))
        t.type("1")
        #expect(t.waitFor("Heure *"))
        #expect(t.waitFor("> "))
        t.type("14h30")
        let after = try #require(t.drawn(until: "> "))
        #expect(!after.contains("✗"), "14h30 is a time: \(after)")
        #expect(try answers(flowd)["time"] as? String == "14:30")
        t.type("b")
        // Back on the first step, its answer as French sets it: "label : value".
        #expect(t.waitFor("En quoi pouvons-nous aider ? : Identité visuelle"), "\(t.text)")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }

    @Test("German: the description in German, and a toggle that must be on is never offered as optional")
    func german() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "onboarding", "--locale", "de"], environment: ["NO_COLOR": "1"])
        #expect(t.waitFor("Los geht's"))
        #expect(t.waitFor("> "))
        #expect(t.text.contains("Tarif wählen, Erinnerungstage festlegen"), "the description in German: \(t.text)")
        #expect(!t.text.contains("Pick a plan"), "the English description: \(t.text)")
        t.type("1")
        #expect(t.waitFor("Eingabe: Weiter"))
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("7) Sonntag"))
        #expect(t.waitFor("> "))
        t.type("1")
        #expect(t.waitFor("Eingabe: Weiter"))
        #expect(t.waitFor("> "))
        t.type("")
        let terms = try #require(t.drawn(until: "> "))
        #expect(terms.contains(" *"), "the terms must be accepted: \(terms)")
        #expect(!terms.contains("(optional)") && !terms.contains("Optional:"), "\(terms)")
        // Enter does not skip it: flowd's "required", and the field again.
        t.type("")
        let again = try #require(t.drawn(until: "> "))
        #expect(again.contains("✗ "), "\(again)")
        #expect(!again.contains("Eingabe: "), "Enter moved on past the terms: \(again)")
        t.type("ja")
        #expect(t.waitFor("Eingabe: "))
        // Sentences are broken at spaces to fit the terminal's 100 columns, not cut mid-word by it.
        #expect(t.text.contains("mit :quit\nbeenden Sie; Ihre Antworten bleiben erhalten."), "\(t.text)")
        let wide = t.text.split(separator: "\n").filter { displayWidth(String($0)) > 99 }
        #expect(wide.isEmpty, "lines wider than the terminal: \(wide)")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }

    @Test("Japanese: said once that the flow is English; full-width numbers and 、 as an input method types them")
    func japanese() throws {
        let flowd = try DaemonFixture.shipped()
        let t = try flowd.terminal(["run", "onboarding", "--locale", "ja"], environment: ["NO_COLOR": "1"])
        #expect(t.waitFor("このフローは日本語に対応していません。英語で表示します。"), "\(t.text)")
        #expect(t.waitFor("3) Team"))
        #expect(t.waitFor("> "))
        t.type("２")
        #expect(t.waitFor("Enter: 次へ"), "２ is option 2: \(t.text)")
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("7) Sunday"))
        #expect(t.waitFor("> "))
        t.type("１、３")
        #expect(t.waitFor("Enter: 次へ"), "\(t.text)")
        let held = try answers(flowd)
        #expect(held["plan"] as? String == "personal")
        #expect(held["reminderDays"] as? [String] == ["mon", "wed"])
        #expect(t.waitFor("> "))
        t.type("")
        let terms = try #require(t.drawn(until: "> "))
        #expect(terms.contains("I accept the terms of service *"), "\(terms)")
        #expect(!terms.contains("任意"), "a toggle that must be on is not optional: \(terms)")
        #expect(t.text.components(separatedBy: "日本語に対応していません").count == 2, "said once")
        t.interrupt()
        #expect(t.wait() == .exited(130))
    }

    @Test("show after a failed submit: the message once, and the command to try again on this bus")
    func showFailed() throws {
        let flowd = try DaemonFixture(
            flows: ["failing.json": WizardSubmitTests.flow("failing", action: "test.fail-submit")],
            plugins: ["FixtureTestPlugin"])
        let id = try flowd.start("failing", ["--locale", "de"])
        #expect(try flowd.flowctl(["set", id, "name=Ada"]).status == .exited(0))
        #expect(try flowd.flowctl(["continue", id]).status == .exited(0))
        let submit = try flowd.flowctl(["submit", id])
        #expect(submit.status == .exited(1), "\(submit.standardError)")
        let show = try flowd.flowctl(["show", id])
        #expect(show.standardOutput.components(separatedBy: "Der Kalender ist voll.").count == 2, "once: \(show.standardOutput)")
        #expect(show.standardOutput.contains("Erneut versuchen: flowctl --address "), "\(show.standardOutput)")
        #expect(show.standardOutput.contains(" submit \(id)"), "\(show.standardOutput)")
        #expect(!show.standardOutput.contains("Send to the help desk:"), "\(show.standardOutput)")
    }
}
