import Foundation
import TestSupport
import Testing

/// `flowctl run FLOW --answers FILE` against a real flowd: a whole session
/// without a person.
@Suite("flowctl run --answers against flowd", .serialized)
struct AnswerRunTests {
    /// Two branches (an order above 10 needs approval), a computed total, Review, no submit action.
    static let order = """
        {"format": 2, "id": "order", "title": "Order",
         "steps": [
          {"id": "what", "title": "What", "fields": [
            {"id": "item", "type": "choice", "label": "Item", "required": true,
             "options": [{"id": "pen", "label": "A pen"}, {"id": "ink", "label": "Ink"}]},
            {"id": "count", "type": "number", "label": "How many", "required": true, "integer": true, "minimum": 1},
            {"id": "total", "type": "computed", "label": "Total", "expr": "count * 3", "display": "{value} €"}],
           "next": [{"if": {"expr": "count > 10"}, "goto": "approval"}, {"goto": "contact"}]},
          {"id": "approval", "title": "Approval", "fields": [{"id": "approver", "type": "text", "label": "Approver", "required": true}]},
          {"id": "contact", "title": "Contact", "fields": [{"id": "email", "type": "email", "label": "Email", "required": true}]}],
         "review": {"note": "Thanks."},
         "submit": {"successMessage": "Ordered {count} of {item}."}}
        """

    func fixture() throws -> DaemonFixture { try DaemonFixture(flows: ["order.json": Self.order]) }

    func write(_ fixture: DaemonFixture, _ name: String, _ json: String) throws -> String {
        try fixture.directory.write(name, json)
    }

    func sessions(_ fixture: DaemonFixture) throws -> [String] {
        try fixture.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").map(String.init)
    }

    @Test("an answer file that branches: every step passed, the session waits on Review; --submit sends it")
    func branches() throws {
        let flowd = try fixture()
        let big = try write(flowd, "big.json", #"{"item": "ink", "count": 12, "approver": "Grace", "email": "ada@example.org"}"#)
        let run = try flowd.flowctl(["run", "order", "--answers", big])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardOutput.contains("Approval (approval)"), "the approval step is on the path: \(run.standardOutput)")
        #expect(run.standardOutput.contains("36 €"))
        let id = try #require(try sessions(flowd).first)
        #expect(run.standardOutput.contains("Session \(id) is ready; send it with: flowctl submit \(id)"))
        let show = try flowd.flowctl(["show", id])
        #expect(show.standardOutput.contains("Step 4 of 4 · Review"), "\(show.standardOutput)")

        let small = try write(flowd, "small.json", #"{"item": "pen", "count": 2, "approver": "Grace", "email": "ada@example.org"}"#)
        let sent = try flowd.flowctl(["run", "order", "--answers", small, "--submit"])
        #expect(sent.status == .exited(0), "\(sent.standardError)")
        #expect(sent.standardOutput.contains("Ordered 2 of A pen."), "\(sent.standardOutput)")
        // The answers flowctl prints drive a new session to the same place.
        let answers = try flowd.flowctl(["answers", id, "--json"])
        let again = try write(flowd, "again.json", answers.standardOutput)
        let rerun = try flowd.flowctl(["run", "order", "--answers", again])
        #expect(rerun.status == .exited(0), "\(rerun.standardError)")
    }

    @Test("an answer file that stops at an invalid step: its errors, exit 1, the session stays and can be resumed")
    func stops() throws {
        let flowd = try fixture()
        let file = try write(flowd, "bad.json", #"{"item": "pen", "count": 2, "email": "not an address"}"#)
        let run = try flowd.flowctl(["run", "order", "--answers", file])
        #expect(run.status == .exited(1))
        #expect(run.standardError.contains("email: Enter a valid email address"), "\(run.standardError)")
        let id = try #require(try sessions(flowd).first)
        #expect(run.standardOutput.contains("Session \(id) stopped at step \"contact\". Mend it with: flowctl resume \(id)"))
        #expect(try flowd.flowctl(["set", id, "email=ada@example.org"]).status == .exited(0))
        #expect(try flowd.flowctl(["continue", id]).standardOutput.contains("Review"))
    }

    @Test("--dry-run checks every step and keeps and sends nothing, valid or not")
    func dryRun() throws {
        let flowd = try fixture()
        let good = try write(flowd, "good.json", #"{"item": "pen", "count": 2, "email": "ada@example.org"}"#)
        let run = try flowd.flowctl(["run", "order", "--answers", good, "--dry-run"])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardOutput.contains("Every step of \"order\" passed. Dry run: nothing was submitted, and the session is closed."))
        #expect(try sessions(flowd).isEmpty)
        let bad = try write(flowd, "bad.json", #"{"item": "pen", "count": 0}"#)
        let failed = try flowd.flowctl(["run", "order", "--answers", bad, "--dry-run"])
        #expect(failed.status == .exited(1))
        #expect(failed.standardError.contains("count:"), "\(failed.standardError)")
        #expect(try sessions(flowd).isEmpty)
    }

    @Test("a file the flow refuses: the field's name and exit 65; usage errors exit 64")
    func refusals() throws {
        let flowd = try fixture()
        let unknown = try write(flowd, "unknown.json", #"{"item": "pen", "cuont": 2}"#)
        let run = try flowd.flowctl(["run", "order", "--answers", unknown])
        #expect(run.status == .exited(65))
        #expect(run.standardError.contains("\"cuont\" is not a field of flow \"order\" (did you mean \"count\"?)"), "\(run.standardError)")
        let wrongType = try write(flowd, "type.json", #"{"count": "two"}"#)
        #expect(try flowd.flowctl(["run", "order", "--answers", wrongType]).standardError.contains("\"count\" is a number field"))
        let broken = try write(flowd, "broken.json", "{\"item\": ")
        let syntax = try flowd.flowctl(["run", "order", "--answers", broken])
        #expect(syntax.status == .exited(65) && syntax.standardError.contains("syntax error at line 1"), "\(syntax.standardError)")
        let other = try write(flowd, "spool.json", #"{"id": "x", "flow": "survey", "answers": {"item": "pen"}}"#)
        #expect(try flowd.flowctl(["run", "order", "--answers", other]).standardError.contains("answers of flow \"survey\", not \"order\""))
        #expect(try flowd.flowctl(["run", "order", "--submit"]).status == .exited(64))
        #expect(try flowd.flowctl(["run", "order", "--answers", unknown, "--submit", "--dry-run"]).status == .exited(64))
        #expect(try flowd.flowctl(["run", "order", "--answers", flowd.directory.file("missing.json")]).status == .exited(66))
        #expect(try sessions(flowd).isEmpty, "nothing was started")
    }
}
