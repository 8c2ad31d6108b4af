import Foundation
import TestSupport
import Testing

/// The built flowctl binary against a real flowd on a private bus.
@Suite("flowctl against flowd", .serialized)
struct IntegrationTests {
    private func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    private func object(_ result: ChildProcess.Result) throws -> [String: Any] {
        try #require(try json(result.standardOutput) as? [String: Any], "\(result.standardOutput)\n\(result.standardError)")
    }

    @Test("every command's happy path and --json shape")
    func happyPath() throws {
        let flowd = try DaemonFixture()

        let flows = try flowd.flowctl(["flows"])
        #expect(flows.status == .exited(0))
        #expect(flows.standardOutput.hasPrefix("ID"))
        #expect(flows.standardOutput.contains("plain") && flows.standardOutput.contains("quick"))
        let flowsJSON = try #require(try json(try flowd.flowctl(["flows", "--json"]).standardOutput) as? [[String: Any]])
        #expect(flowsJSON.map { $0["id"] as? String } == ["plain", "quick"])
        #expect(flowsJSON[0]["steps"] as? Int == 2)
        #expect((flowsJSON[0]["titles"] as? [String: String])?["de"] == "Schlicht")

        let id = try flowd.start("plain")
        #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let sessions = try flowd.flowctl(["sessions"])
        #expect(sessions.standardOutput.contains(id) && sessions.standardOutput.contains("editing"))
        #expect(try flowd.flowctl(["sessions", "-q"]).standardOutput == id + "\n")
        let sessionsJSON = try #require(try json(try flowd.flowctl(["sessions", "--json"]).standardOutput) as? [[String: String]])
        #expect(sessionsJSON == [["id": id, "flow": "plain", "state": "editing", "path": "/org/flowd/Flow1/session/\(id)"]])

        let show = try flowd.flowctl(["show", id])
        #expect(show.status == .exited(0))
        #expect(show.standardOutput.hasPrefix("Step 1 of 3 · Who you are\n"))
        #expect(show.standardOutput.contains("Field: pin (secure)"))
        let showJSON = try object(try flowd.flowctl(["show", id, "--json"]))
        #expect(showJSON["session"] as? String == id)
        #expect(showJSON["state"] as? String == "editing")
        let step = try #require(showJSON["step"] as? [String: Any])
        #expect(step["id"] as? String == "who")
        #expect(step["announcement"] as? String == "Step 1 of 3, Who you are")
        #expect((step["fields"] as? [[String: Any]])?.map { $0["id"] as? String } == ["name", "pin"])

        // set: the PIN from standard input, so no warning; a typed name.
        let set = try flowd.flowctl(["set", String(id.prefix(8)), "name=Ada Lovelace", "pin=-"], input: "2468\n")
        #expect(set.status == .exited(0), "\(set.standardError)")
        #expect(set.standardError.isEmpty)
        let continued = try flowd.flowctl(["continue", id])
        #expect(continued.status == .exited(0))
        #expect(continued.standardOutput.hasPrefix("Step 2 of 3 · What it is about\n"))

        let typed = try flowd.flowctl(["set", id, "topic=other", "topic.other=A kiosk", "count=3", "urgent=yes", "days=mon,Tuesday", "--json"])
        #expect(typed.status == .exited(0), "\(typed.standardError)")
        #expect(try object(typed)["errors"] as? [String: String] == [:])
        let continueJSON = try object(try flowd.flowctl(["continue", id, "--json"]))
        #expect(continueJSON["moved"] as? Bool == true)
        #expect((continueJSON["step"] as? [String: Any])?["kind"] as? String == "review")

        let review = try flowd.flowctl(["review", id])
        #expect(review.standardOutput.contains("Who you are (who)"))
        #expect(review.standardOutput.contains("Nothing is sent anywhere."))
        #expect(!review.standardOutput.contains("2468"), "a secure value never comes back")
        let reviewJSON = try object(try flowd.flowctl(["review", id, "--json"]))
        let groups = try #require(reviewJSON["groups"] as? [[String: Any]])
        #expect(groups.map { $0["step"] as? String } == ["who", "what"])
        #expect(groups.allSatisfy { $0["finished"] as? Bool == true })

        let answers = try object(try flowd.flowctl(["answers", id, "--json"]))
        #expect(answers["name"] as? String == "Ada Lovelace")
        #expect(answers["count"] as? Int == 3)
        #expect(answers["urgent"] as? Bool == true)
        #expect(answers["days"] as? [String] == ["mon", "tue"])
        #expect(answers["topic"] as? String == "other")
        #expect(answers["topic.other"] as? String == "A kiosk")
        #expect(answers["pin"] == nil)
        #expect(try flowd.flowctl(["answers", id]).standardOutput.contains("count        3"))

        let back = try flowd.flowctl(["back", id])
        #expect(back.status == .exited(0))
        #expect(back.standardOutput.hasPrefix("Step 2 of 3 · What it is about"))
        #expect(back.standardOutput.contains("Value:   other (Other): A kiosk"))
        let goto = try flowd.flowctl(["goto", id, "review"])
        #expect(goto.status == .exited(0))
        // The command on the bus this one used, to be run as it is.
        #expect(goto.standardOutput.contains("Submit: flowctl --address \(flowd.address) submit \(id)"), "\(goto.standardOutput)")

        let submit = try object(try flowd.flowctl(["submit", id, "--json"]))
        #expect(submit["submitted"] as? Bool == true)
        #expect(submit["state"] as? String == "submitted")
        let submittedShow = try flowd.flowctl(["show", id])
        #expect(submittedShow.standardOutput.hasPrefix("✓ "))

        let cancel = try flowd.flowctl(["cancel", id])
        #expect(cancel.status == .exited(1), "cancel on a submitted session: InvalidState")

        let plugins = try flowd.flowctl(["plugins", "--json"])
        #expect(plugins.status == .exited(0))
        #expect(try json(plugins.standardOutput) is [Any])

        let close = try flowd.flowctl(["close", id])
        #expect(close.status == .exited(0) && close.standardOutput.isEmpty)
        #expect(try flowd.flowctl(["show", id]).status == .exited(66))
    }

    @Test("sessions filters by user, flow, state and age, combined, through a real flowd")
    func sessionsFilters() throws {
        let flowd = try DaemonFixture()
        let first = try flowd.start("plain")
        let second = try flowd.start("plain")
        let done = try flowd.start("quick")
        #expect(try flowd.flowctl(["set", done, "ok=yes"]).status == .exited(0))
        #expect(try flowd.flowctl(["continue", done]).status == .exited(0))
        func ids(_ filters: [String]) throws -> [String] {
            let result = try flowd.flowctl(["sessions", "-q"] + filters)
            #expect(result.status == .exited(0), "\(filters): \(result.standardError)")
            return result.standardOutput.split(separator: "\n").map(String.init).sorted()
        }
        let me = String(getuid())
        #expect(try ids([]) == [first, second, done].sorted())
        #expect(try ids(["--flow", "plain"]) == [first, second].sorted())
        #expect(try ids(["--state", "submitted"]) == [done])
        #expect(try ids(["--state", "editing", "--flow", "quick"]) == [])
        #expect(try ids(["--user", me, "--flow", "quick", "--state", "submitted"]) == [done])
        #expect(try ids(["--user", "4242"]) == [], "nobody's sessions here")
        #expect(try ids(["--older-than", "1h"]) == [], "every session was changed just now")
        // The table and --json filter alike.
        let table = try flowd.flowctl(["sessions", "--state", "submitted"])
        #expect(table.standardOutput.contains(done) && !table.standardOutput.contains(first))
        let listed = try #require(try json(try flowd.flowctl(["sessions", "--json", "--flow", "quick"]).standardOutput) as? [[String: String]])
        #expect(listed.map { $0["id"] } == [done])
        // A bad value: exit 64 with what is expected, before flowd is asked.
        for (option, value) in [("--older-than", "soon"), ("--state", "done"), ("--user", "no-such-user-flowd-test")] {
            let bad = try ChildProcess.run(Binaries.flowctl, ["--address", "unix:path=/nonexistent/bus", "sessions", option, value])
            #expect(bad.status == .exited(64), "\(option) \(value): \(bad.standardError)")
            #expect(bad.standardError.hasPrefix("flowctl: \(option) takes "), "\(bad.standardError)")
        }
    }

    @Test("a flow without Review finishes on Continue; toggles are typed; errors exit 1")
    func quickFlow() throws {
        let flowd = try DaemonFixture()
        let id = try flowd.start("quick")
        let refused = try flowd.flowctl(["set", id, "ok=no"])
        #expect(refused.status == .exited(1))
        #expect(refused.standardError.hasPrefix("ok: "))
        let stayed = try flowd.flowctl(["continue", id])
        #expect(stayed.status == .exited(1))
        // Submit on the unfinished last step: flowd's message once, then how such a flow ends.
        let submit = try flowd.flowctl(["submit", id])
        #expect(submit.status == .exited(1))
        #expect(submit.standardError == """
            ✗ “Only” is not finished yet. See it with: flowctl --address \(flowd.address) show \(id)
            Flow “quick” has no Review page: 'flowctl continue \(id)' on its last step, “Only”, submits it.

            """)
        #expect(try flowd.flowctl(["set", id, "ok=y"]).status == .exited(0))
        let finished = try flowd.flowctl(["continue", id])
        #expect(finished.status == .exited(0), "\(finished.standardError)")
        #expect(finished.standardOutput.hasPrefix("✓ "))
        let state = try object(try flowd.flowctl(["show", id, "--json"]))
        #expect(state["state"] as? String == "submitted")
    }

    @Test("the session's language: --locale de gives German built-in strings")
    func locale() throws {
        let flowd = try DaemonFixture()
        let id = try flowd.start("plain", ["--locale", "de"])
        let show = try flowd.flowctl(["show", id])
        #expect(show.standardOutput.hasPrefix("Schritt 1 von 3 · Wer Sie sind\n"))
    }

    @Test("bad input: unknown ids, a wrong type, a refused value, a bad flow file")
    func badInput() throws {
        let flowd = try DaemonFixture()
        let unknown = try flowd.flowctl(["show", String(repeating: "0", count: 32)])
        #expect(unknown.status == .exited(66))
        #expect(unknown.standardError.hasPrefix("flowctl: "))
        #expect(unknown.standardError.filter { $0 == "\n" }.count == 1)
        #expect(try flowd.flowctl(["start", "nosuch"]).status == .exited(66))
        #expect(try flowd.flowctl(["show", "zzz"]).status == .exited(64))

        let id = try flowd.start("plain")
        _ = try flowd.flowctl(["set", id, "name=Ada", "pin=-"], input: "1357\n")
        _ = try flowd.flowctl(["continue", id])
        let wrongType = try flowd.flowctl(["set", id, "count=three"])
        #expect(wrongType.status == .exited(65))
        #expect(wrongType.standardError == "flowctl: \"three\" is not a number (field \"count\" is a number)\n")
        let notAnOption = try flowd.flowctl(["set", id, "topic=weaving"])
        #expect(notAnOption.status == .exited(65))
        let outOfRange = try flowd.flowctl(["set", id, "count=12"])
        #expect(outOfRange.status == .exited(1))
        #expect(outOfRange.standardError.hasPrefix("count: "))
        let unvisited = try flowd.flowctl(["goto", id, "nosuch"])
        #expect([.exited(66), .exited(1)].contains(unvisited.status))

        let files = try TemporaryDirectory(prefix: "flowctl-check")
        let bad = try files.write("bad.json", #"{"format": 1, "id": "b", "title": "B", "steps": [{"id": "s", "title": "S", "fields": [{"id": "e", "label": "E", "type": "emial"}]}]}"#)
        let check = try ChildProcess.run(Binaries.flowctl, ["check", bad])
        #expect(check.status == .exited(1))
        #expect(check.standardOutput.hasPrefix("\(bad): steps[0].fields[0].type: unknown type \"emial\""))
        let examples = try FileManager.default.contentsOfDirectory(atPath: Repository.flowsDirectory)
            .filter { $0.hasSuffix(".json") }.map { Repository.flowsDirectory + "/" + $0 }
        let good = try ChildProcess.run(Binaries.flowctl, ["check"] + examples)
        #expect(good.status == .exited(0), "\(good.standardOutput)")
        #expect(good.standardOutput.split(separator: "\n").count == examples.count)
    }

    @Test("no daemon: exit 69 and how to start it")
    func noDaemon() throws {
        let bus = try PrivateBus()
        let result = try ChildProcess.run(Binaries.flowctl, ["--address", bus.address, "flows"])
        #expect(result.status == .exited(69))
        // flowd beside the built flowctl, by the path /proc/self/exe gives.
        let flowdPath = URL(fileURLWithPath: Binaries.flowd).resolvingSymlinksInPath().path
        #expect(result.standardError == "flowctl: flowd is not running on the bus at \(bus.address). Start it with: \(flowdPath) --address \(bus.address)\n")
        #expect(result.standardOutput.isEmpty)

        let nowhere = try ChildProcess.run(Binaries.flowctl, ["--address", "unix:path=/nonexistent/bus", "sessions"])
        #expect(nowhere.status == .exited(69))
        #expect(nowhere.standardError.hasPrefix("flowctl: cannot connect to the bus at unix:path=/nonexistent/bus"))
    }

    @Test("watch follows a session live until it is submitted")
    func watch() throws {
        let flowd = try DaemonFixture()
        let id = try flowd.start("quick")
        let watcher = try ChildProcess(Binaries.flowctl, ["--address", flowd.address, "watch", id, "--json"])
        // The first line is the state it starts from: from then on it is subscribed.
        #expect(watcher.waitForOutput { $0.contains("\n") })
        #expect(try flowd.flowctl(["set", id, "ok=yes"]).status == .exited(0))
        #expect(try flowd.flowctl(["continue", id]).status == .exited(0))
        #expect(watcher.wait(timeout: .seconds(60)) == .exited(0), "\(watcher.standardOutput)")
        let events = try watcher.standardOutput.split(separator: "\n").map { line in
            try #require(try json(String(line)) as? [String: Any])
        }
        let names = events.compactMap { $0["event"] as? String }
        #expect(names.first == "PropertiesChanged")
        #expect(names.contains("Submitted"))
        #expect(names.contains("Announcement"))
        #expect(events.contains { ($0["changed"] as? [String: Any])?["State"] as? String == "submitted" })
    }

    @Test("colour on a terminal only, and never with NO_COLOR")
    func colour() throws {
        let flowd = try DaemonFixture()
        let piped = try flowd.flowctl(["flows"])
        #expect(piped.standardOutput.hasPrefix("ID ") && !piped.standardOutput.contains("\u{1B}"))
        // swift test runs tests with NO_COLOR=1; an empty NO_COLOR counts as unset (no-color.org).
        let terminal = try flowd.terminal(["flows"], environment: ["NO_COLOR": ""])
        #expect(terminal.wait() == .exited(0))
        #expect(terminal.rawText.contains("\u{1B}[1;4mID\u{1B}[0m"), "\(terminal.rawText)")
        let noColor = try flowd.terminal(["flows"], environment: ["NO_COLOR": "1"])
        #expect(noColor.wait() == .exited(0))
        #expect(noColor.rawText.contains("ID") && !noColor.rawText.contains("\u{1B}"))
    }

    @Test("bash completion asks the daemon on the bus the command line names, also without bash-completion's library")
    func bashCompletion() throws {
        let flowd = try DaemonFixture()
        let id = try flowd.start("plain")
        let script = Repository.root.appendingPathComponent("completions/flowctl.bash").path
        // As bash hands the line to a completion function: COMP_LINE and
        // COMP_POINT, and COMP_WORDS cut at white space and around each run of
        // ':' and '=' (from COMP_WORDBREAKS), so `unix:path=/x` is 5 words.
        // This machine has no bash-completion library, the case of issue 14.
        func complete(_ words: [String]) throws -> [String] {
            let line = ([Binaries.flowctl] + words).joined(separator: " ")
            var cut: [String] = []
            for word in [Binaries.flowctl] + words {
                var pieces: [String] = [], piece = "", breaking = false
                for character in word {
                    let isBreak = character == ":" || character == "="
                    if isBreak != breaking, !piece.isEmpty { pieces.append(piece); piece = "" }
                    piece.append(character)
                    breaking = isBreak
                }
                cut += piece.isEmpty && !pieces.isEmpty ? pieces : pieces + [piece]
            }
            let quoted = cut.map { "'" + $0 + "'" }.joined(separator: " ")
            let program = """
                source '\(script)'
                COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(cut.count - 1)
                _flowctl; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try ChildProcess.run("/bin/bash", ["-c", program])
            #expect(result.status == .exited(0), "\(result.standardError)")
            return result.standardOutput.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["sho"]) == ["show"])
        #expect(try complete(["--address", flowd.address, "run", ""]) == ["plain", "quick"])
        #expect(try complete(["--address", flowd.address, "show", ""]) == [id])
        #expect(try complete(["--address", flowd.address, "set", id, ""]) == ["name=", "pin="])
        #expect(try complete(["start", "plain", "--locale", "pt"]) == ["pt-BR"])
        _ = try flowd.flowctl(["set", id, "name=Ada", "pin=-"], input: "1234\n")
        _ = try flowd.flowctl(["continue", id])
        // bash replaces the text after the last '=', so that is what comes back.
        #expect(try complete(["--address", flowd.address, "set", id, "topic=l"]) == ["looms"])
        #expect(try complete(["--address", flowd.address, "set", id, "topic="]) == ["engines", "looms", "other"])
        #expect(try complete(["--address", flowd.address, "set", id, "days=mon,"]) == ["mon,mon", "mon,tue"])
        #expect(try complete(["--address", flowd.address, "goto", id, ""]) == ["who", "what", "review"])
    }

    @Test("scripts/demo-drive.sh walks consultation to submitted")
    func demoDrive() throws {
        // The example flow with fixed options and no plugins, so that it
        // loads whatever plugins this daemon has.
        let url = URL(fileURLWithPath: Repository.flowsDirectory + "/consultation.json")
        var flow = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var steps = try #require(flow["steps"] as? [[String: Any]])
        for s in steps.indices {
            guard var fields = steps[s]["fields"] as? [[String: Any]] else { continue }
            for f in fields.indices {
                fields[f]["prefill"] = nil
                if fields[f]["optionsFrom"] != nil {
                    fields[f]["optionsFrom"] = nil
                    fields[f]["options"] = [["id": "slot_a", "label": "First"], ["id": "slot_b", "label": "Second"]]
                }
            }
            steps[s]["fields"] = fields
        }
        flow["steps"] = steps
        flow["submit"] = nil
        let text = String(decoding: try JSONSerialization.data(withJSONObject: flow), as: UTF8.self)
        let flowd = try DaemonFixture(flows: ["consultation.json": text])

        let script = Repository.root.appendingPathComponent("scripts/demo-drive.sh").path
        let result = try ChildProcess.run(script, [flowd.address], environment: ["FLOWCTL": Binaries.flowctl])
        #expect(result.status == .exited(0), "\(result.standardOutput)\n\(result.standardError)")
        #expect(result.standardOutput.contains("Step 5 of 5 · Check your booking"))
        #expect(result.standardOutput.contains("✓ "))
        #expect(result.standardOutput.contains("day        slot_a"))
        let id = try #require(try flowd.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").first.map(String.init))
        let state = try object(try flowd.flowctl(["show", id, "--json"]))
        #expect(state["state"] as? String == "submitted")
    }

    @Test("the wizard in a terminal: an error shown inline and fixed, Back, Review with Edit, Submit")
    func wizard() throws {
        let flowd = try DaemonFixture()
        let terminal = try flowd.terminal(["run", "plain"])
        #expect(terminal.waitFor("Step 1 of 3 · Who you are"))
        #expect(terminal.waitFor("Name *"))
        #expect(terminal.waitFor("> "))
        terminal.type("Ada")
        #expect(terminal.waitFor("PIN *"))
        #expect(terminal.waitFor("> "))
        #expect(!terminal.echoes, "a secure field is read without echo")
        terminal.type("12")
        #expect(terminal.waitFor("✗ Enter at least 4 characters."), "the daemon's error, under the field")
        #expect(terminal.waitFor("> "))
        terminal.type("8642")
        #expect(terminal.waitFor("Enter: Continue"))
        #expect(terminal.waitFor("> "))
        #expect(terminal.echoes, "echo is back after the secret")
        terminal.type("")
        #expect(terminal.waitFor("Step 2 of 3 · What it is about"))
        #expect(terminal.waitFor("3) Other"))
        #expect(terminal.waitFor("> "))
        terminal.type("2")
        #expect(terminal.waitFor("How many *"))
        #expect(terminal.waitFor("> "))
        terminal.type("0")
        #expect(terminal.waitFor("✗ "))
        #expect(terminal.waitFor("> "))
        terminal.type("3")
        #expect(terminal.waitFor("(yes/no)"))
        terminal.type("y")
        #expect(terminal.waitFor("Days"))
        #expect(terminal.waitFor("> "))
        terminal.type("1,2")
        #expect(terminal.waitFor("b: Back"))
        #expect(terminal.waitFor("> "))
        terminal.type("b")
        #expect(terminal.waitFor("Step 1 of 3 · Who you are"))
        #expect(terminal.waitFor("Name: Ada"), "Back shows the answers kept")
        #expect(terminal.waitFor("> "))
        terminal.type("")
        #expect(terminal.waitFor("Step 2 of 3 · What it is about"))
        #expect(terminal.waitFor("Enter: Continue"))
        #expect(terminal.waitFor("> "))
        terminal.type("")
        #expect(terminal.waitFor("Step 3 of 3 · Review"))
        #expect(terminal.waitFor("How many"))
        #expect(terminal.waitFor("Enter: Submit"))
        #expect(terminal.waitFor("> "))
        terminal.type("2")
        #expect(terminal.waitFor("Enter: Back to review"), "Edit, then Continue goes back to Review")
        #expect(terminal.waitFor("> "))
        terminal.type("e")
        #expect(terminal.waitFor("Topic *"))
        #expect(terminal.waitFor("> "))
        terminal.type("")
        #expect(terminal.waitFor("How many *"))
        #expect(terminal.waitFor("> "))
        terminal.type("7")
        for _ in 0..<2 {
            #expect(terminal.waitFor("> "))
            terminal.type("")
        }
        #expect(terminal.waitFor("Enter: Back to review"))
        #expect(terminal.waitFor("> "))
        terminal.type("")
        #expect(terminal.waitFor("Step 3 of 3 · Review"))
        #expect(terminal.waitFor("Enter: Submit"))
        #expect(terminal.waitFor("> "))
        terminal.type("")
        #expect(terminal.waitFor("✓ "))
        #expect(terminal.wait() == .exited(0), "\(terminal.text)")
        #expect(!terminal.text.contains("8642"), "the secret never reached the screen")

        let id = try #require(try flowd.flowctl(["sessions", "-q"]).standardOutput.split(separator: "\n").first.map(String.init))
        let answers = try object(try flowd.flowctl(["answers", id, "--json"]))
        #expect(answers["count"] as? Int == 7)
        #expect(answers["days"] as? [String] == ["mon", "tue"])
        #expect(answers["topic"] as? String == "looms")
    }

    @Test("Ctrl-C leaves the session saved and says how to resume it; resume finishes it")
    func interruptAndResume() throws {
        let flowd = try DaemonFixture()
        let terminal = try flowd.terminal(["run", "plain"])
        #expect(terminal.waitFor("Name *"))
        #expect(terminal.waitFor("> "))
        terminal.type("Grace")
        #expect(terminal.waitFor("PIN *"))
        #expect(terminal.waitFor("> "))
        #expect(!terminal.echoes)
        terminal.interrupt()
        #expect(terminal.waitFor("Resume it with: flowctl --address \(flowd.address) resume "))
        #expect(terminal.wait() == .exited(130), "\(terminal.text)")

        let sessions = try flowd.flowctl(["sessions", "--json"])
        let list = try #require(try json(sessions.standardOutput) as? [[String: String]])
        let id = try #require(list.first?["id"])
        #expect(terminal.text.contains("Session \(id) is saved."))
        #expect(list.first?["state"] == "editing")

        let resumed = try flowd.terminal(["resume", id])
        #expect(resumed.waitFor("Plain"))
        #expect(resumed.waitFor("Step 1 of 3 · Who you are"))
        #expect(resumed.waitFor("PIN *"), "the answered name is kept; the PIN is asked")
        #expect(resumed.waitFor("> "))
        resumed.type("97531")
        #expect(resumed.waitFor("Enter: Continue"))
        #expect(resumed.waitFor("> "))
        resumed.type("")
        #expect(resumed.waitFor("Topic *"))
        #expect(resumed.waitFor("> "))
        resumed.type("engines")
        #expect(resumed.waitFor("How many *"))
        #expect(resumed.waitFor("> "))
        resumed.type("1")
        for _ in 0..<3 {
            #expect(resumed.waitFor("> "))
            resumed.type("")
        }
        #expect(resumed.waitFor("Enter: Submit"))
        #expect(resumed.waitFor("> "))
        resumed.type("")
        #expect(resumed.waitFor("✓ "))
        #expect(resumed.wait() == .exited(0), "\(resumed.text)")
        let state = try object(try flowd.flowctl(["show", id, "--json"]))
        #expect(state["state"] as? String == "submitted")
    }
}
