import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Flow files at start-up and on reload (`Reload` and SIGHUP).
@Suite("Flow files: refusal, Reload and SIGHUP")
struct FlowLoadingTests {
    @Test("bad flow files are refused and reported with file and JSON path; the good ones are served")
    func badFilesNextToGoodOnes() async throws {
        var flows = TestFlows.standard
        flows["broken.json"] = TestFlows.misspelledType
        flows["garbled.json"] = TestFlows.notJSON
        flows["zz-trip.json"] = TestFlows.minimal(id: "trip", title: "Second trip")
        flows["README.txt"] = "not a flow"
        try await withDaemon(DaemonSettings(flows: flows)) { fixture in
            #expect(try await fixture.client.flowIDs() == ["durable", "quick", "trip"])
            let trip = try #require(try await fixture.client.listFlows().first { $0.id == "trip" })
            #expect(trip.title == "Plan a trip", "the first file with an id wins")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await fixture.client.start("broken") }

            let log = fixture.daemon.standardError
            let lines = log.split(separator: "\n").map(String.init)
            let broken = lines.filter { $0.contains("broken.json") }
            #expect(broken.contains { $0.contains("steps[0].fields[0].type") && $0.contains("emial") && $0.contains("error:") },
                    "\(log)")
            // A syntax error names the file and the position (no JSON path: the document has none).
            #expect(lines.contains { $0.contains("garbled.json: syntax error at line 1, column 41") }, "\(log)")
            #expect(lines.contains { $0.contains("zz-trip.json") && $0.contains("already defined") }, "\(log)")
            #expect(!log.contains("README.txt"))
            // The good flows work.
            let session = try await fixture.client.start("quick")
            #expect(try await fixture.client.step(session).id == "rating")
        }
    }

    @Test("Reload picks up new, changed and removed flow files; sessions of a removed flow come back with it")
    func reload() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let quick = try await client.start("quick")
            try await client.setAnswers(quick, ["stars": .int64(2)])

            try fixture.writeFlow("extra.json", TestFlows.minimal(id: "extra"))
            #expect(try await client.flowIDs() == ["durable", "quick", "trip"], "nothing changes before the reload")
            try await client.reload()
            #expect(try await client.flowIDs() == ["durable", "extra", "quick", "trip"])
            #expect(try await client.step(try await client.start("extra")).id == "only")

            // A removed flow: its sessions are kept but not served.
            try FileManager.default.removeItem(atPath: fixture.flowsDirectory + "/quick.json")
            try await client.reload()
            #expect(try await client.flowIDs() == ["durable", "extra", "trip"])
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.step(quick) }
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.start("quick") }
            // Back again: so is the session, answers and all.
            try fixture.writeFlow("quick.json", TestFlows.quick)
            try await client.reload()
            #expect(try await client.answers(quick)["stars"] == .int64(2))

            // A flow file that breaks on reload is refused and reported; the rest stay.
            try fixture.writeFlow("extra.json", TestFlows.misspelledType)
            try await client.reload()
            #expect(try await client.flowIDs() == ["durable", "quick", "trip"])
            #expect(fixture.daemon.standardError.contains("extra.json"))
            // Reload answered, and the daemon told systemd it reloaded.
            #expect(fixture.daemon.notify.waitForAssignment("RELOADING") == "1")
        }
    }

    @Test("a reload that changes a flow keeps the secure answers typed into its running sessions")
    func reloadKeepsSecureAnswers() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("durable")
            #expect(try await client.setAnswers(session, ["n": .string("1"), "pin": .string("4711 secret")]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.step(session).id == "review")
            // The flow file changes (a new title) and is reloaded.
            try fixture.writeFlow(
                "durable.json", TestFlows.durable.replacingOccurrences(of: "\"title\": \"Durable\"", with: "\"title\": \"Sturdy\""))
            try await fixture.client.reload()
            let groups = try await client.review(session).groups
            #expect(groups.map(\.finished) == [true, true], "the reload lost the PIN: \(groups.map(\.status))")
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == .string("submitted"))
        }
    }

    @Test("a reload that changes a flow's texts shows them at once in its running sessions: GetStep, FlowTitle, Path")
    func reloadChangesTexts() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("durable")
            let before = try await client.step(session)
            #expect(before.title == "Counter")
            #expect(before.flowTitle == "Durable")
            #expect(try await client.property(.flowTitle, of: session) == .string("Durable"))
            try fixture.writeFlow(
                "durable.json",
                TestFlows.durable.replacingOccurrences(of: "\"title\": \"Durable\"", with: "\"title\": \"Sturdy\"")
                    .replacingOccurrences(of: "\"title\": \"Counter\"", with: "\"title\": \"Tally\""))
            try await client.reload()
            let after = try await client.step(session)
            #expect(after.title == "Tally", "the step title the flow had when the page was first made")
            #expect(after.flowTitle == "Sturdy")
            #expect(try await client.property(.flowTitle, of: session) == .string("Sturdy"))
            let path = try await client.property(.path, of: session)
            #expect("\(path)".contains("Tally") && !"\(path)".contains("Counter"), "\(path)")
            // A new session of the reloaded flow says the new title on arrival.
            let fresh = try await client.start("durable")
            #expect(try await client.step(fresh).announcement.contains("Tally"))
        }
    }

    @Test("SIGHUP reloads the flows, with RELOADING=1 and READY=1 around it")
    func sighup() async throws {
        try await withDaemon { fixture in
            try fixture.writeFlow("later.json", TestFlows.minimal(id: "later"))
            fixture.daemon.child.send(.hangUp)
            let notify = fixture.daemon.notify
            #expect(notify.wait { $0.values(of: "READY").count == 2 }, "no READY=1 after the reload: \(notify.messages)")
            #expect(notify.values(of: "RELOADING") == ["1"])
            // READY=1 came after the reload, so the new flow is served now.
            #expect(try await fixture.client.flowIDs() == ["durable", "later", "quick", "trip"])
            #expect(fixture.daemon.child.exitStatus == nil, "SIGHUP must not stop flowd")
        }
    }

    @Test("Reload re-reads the configuration: new limits apply at once; a broken file changes nothing")
    func reloadConfiguration() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nMaxStringLength=64\n")) { fixture in
            let client = fixture.client
            let session = try await client.start("durable")
            let long = DBusValue.string(String(repeating: "n", count: 80))
            await expectDBusError(FlowdErrorName.limitExceeded) { try await client.setAnswers(session, ["n": long]) }

            let path = try #require(fixture.configurationPath)
            try "[Limits]\nMaxStringLength=100\n".write(toFile: path, atomically: true, encoding: .utf8)
            try await fixture.client.reload()
            #expect(try await client.setAnswers(session, ["n": long]) == [:])

            try "[Limits]\nMaxStringLength=ten\n".write(toFile: path, atomically: true, encoding: .utf8)
            let refused = await expectDBusError("org.flowd.Flow1.Error.Failed") { try await fixture.client.reload() }
            #expect(refused?.contains("\(path):2") == true, "\(String(describing: refused))")
            // The previous configuration still holds.
            #expect(try await client.setAnswers(session, ["n": long]) == [:])
            await expectDBusError(FlowdErrorName.limitExceeded) {
                try await client.setAnswers(session, ["n": .string(String(repeating: "n", count: 101))])
            }
        }
    }
}
