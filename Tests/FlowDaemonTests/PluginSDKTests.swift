import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// SDK 1.1's logging, localized messages and normalized values, through
/// flowd with the real test plugin (`FixtureTestPlugin`, loaded with
/// dlopen) on a private bus.
@Suite("Plugin SDK 1.1 through flowd: normalized values, plugin log lines, localized messages")
struct PluginSDKTests {
    static func vatFlow(id: String, options: String = "{}") -> String {
        """
        { "format": 1, "id": "\(id)", "title": "VAT",
          "steps": [{"id": "tax", "title": "Tax",
                     "fields": [{"id": "vat", "type": "text", "label": "VAT", "maxLength": 20,
                                 "validators": [{"plugin": "test.vat", "options": \(options)}]}]}],
          "review": {"note": "Check it."} }
        """
    }

    static let flows: [String: String] = [
        "vat.json": vatFlow(id: "vat"),
        "vatlist.json": vatFlow(id: "vatlist", options: #"{"returns": "list"}"#),
        "vatpadded.json": vatFlow(id: "vatpadded", options: #"{"returns": "padded"}"#),
        "vatunsettled.json": vatFlow(id: "vatunsettled", options: #"{"returns": "unsettled"}"#),
        "chatty.json": """
            { "format": 1, "id": "chatty", "title": "Chatty",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "note", "type": "text", "label": "Note",
                                     "validators": [{"plugin": "test.chatty", "options": {"lines": 250}}]}]}] }
            """,
        "secret.json": """
            { "format": 1, "id": "secret", "title": "Secret",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "pin", "type": "secure", "label": "PIN",
                                     "validators": [{"plugin": "test.chatty", "options": {"lines": 0, "echo": true}}]}]}] }
            """,
    ]
    static let settings = DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin"])
    /// The same with the test plugin isolated (`flowd-plugin-host`): every
    /// test runs both ways, so values, log lines and messages are shown to
    /// cross the process boundary unchanged.
    static let isolatedSettings = DaemonSettings(
        flows: flows, configuration: "[Plugin FixtureTestPlugin]\nIsolated=yes\n", plugins: ["FixtureTestPlugin"])

    static func settings(isolated: Bool) -> DaemonSettings { isolated ? isolatedSettings : settings }

    static func lines(_ log: String, containing text: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains(text) }
    }

    /// flowd's stderr once `done` holds for it (its pipe is read while the
    /// test goes on), or as it is after 20 s.
    static func log(of fixture: DaemonFixture, until done: (String) -> Bool) async -> String {
        for _ in 0..<1000 {
            let log = fixture.daemon.standardError
            if done(log) { return log }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return fixture.daemon.standardError
    }

    /// The lines a flood of `test.chatty` wrote, and the counts of the lines
    /// flowd suppressed.
    static func flood(in log: String) -> (written: [Substring], suppressed: [Int]) {
        let suppressed = lines(log, containing: "plugin test logged too much: ").compactMap { line -> Int? in
            guard let range = line.range(of: "logged too much: ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return (lines(log, containing: "chatty line "), suppressed)
    }

    @Test("a validator's normalized value is what the step, the answers and the review show, and what is stored", arguments: [false, true])
    func normalizedValueIsStored(isolated: Bool) async throws {
        try await withDaemon(Self.settings(isolated: isolated)) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "vat", locale: "en", prefill: [:])
            #expect(try await client.setAnswers(session, ["vat": "de 123.456.789"]) == [:])
            #expect(try await client.answers(session)["vat"] == .string("DE123456789"))
            let field = try #require(try await client.step(session).fields.first { $0.id == "vat" })
            #expect(field.value == .string("DE123456789"), "\(String(describing: field.value))")
            #expect(try await client.continueStep(session) == [:])
            let review = String(describing: try await client.review(session))
            #expect(review.contains("DE123456789") && !review.contains("de 123"), "\(review)")
            // Stored, not only cached: a restarted flowd reads it back.
            await fixture.stop()
            try await fixture.startAgain()
            let again = try fixture.connect()
            #expect(try await again.answers(session)["vat"] == .string("DE123456789"))
            // The plugin's own line about it reached the log, under its name.
            let line = try #require(Self.lines(fixture.allStandardError, containing: "normalized a VAT id").first)
            // (Read after a restart: the first daemon's stderr is complete.)
            #expect(line.contains("plugin=test") && line.contains("capability=test.vat"), "\(line)")
            #expect(line.contains("plugin_country=DE") && line.contains("plugin_length=11"), "\(line)")
        }
    }

    @Test("a normalized value of the wrong type, or one that breaks the field's rules, is the plugin's failure: refused, logged, nothing stored", arguments: [false, true])
    func badNormalizationsFail(isolated: Bool) async throws {
        try await withDaemon(Self.settings(isolated: isolated)) { fixture in
            let client = fixture.client
            for flow in ["vatlist", "vatpadded"] {
                let session = try await client.startSession(flow: flow, locale: "en", prefill: [:])
                let errors = try await client.setAnswers(session, ["vat": "de 123 456 789"])
                #expect(errors["vat"] == "Couldn't check this value.", "\(flow): \(errors)")
                #expect(try await client.answers(session)["vat"] == .string("de 123 456 789"), "\(flow): the typed value stays")
                #expect(try await client.continueStep(session)["vat"] == "Couldn't check this value.", "\(flow)")
            }
            let marker = "validator test.vat failed: its normalized value"
            let log = await Self.log(of: fixture) { log in
                let lines = Self.lines(log, containing: marker)
                return lines.contains { $0.contains("flow=vatlist") } && lines.contains { $0.contains("flow=vatpadded") }
            }
            let failures = Self.lines(log, containing: marker)
            #expect(failures.count >= 2, "\(log.suffix(3000))")
            #expect(failures.contains { $0.contains("does not fit the field") && $0.contains("flow=vatlist") }, "\(failures)")
            #expect(failures.contains { $0.contains("breaks the field's own rules") && $0.contains("flow=vatpadded") }, "\(failures)")
            #expect(failures.allSatisfy { $0.contains("plugin=test") && $0.contains("error=PluginFailed") && $0.contains("field=vat") })
        }
    }

    @Test("a validator is not asked again about its own normalized value: one that would never settle is stored once and Continue moves on", arguments: [false, true])
    func ownNormalizationIsNotRechecked(isolated: Bool) async throws {
        try await withDaemon(Self.settings(isolated: isolated)) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "vatunsettled", locale: "en", prefill: [:])
            #expect(try await client.setAnswers(session, ["vat": "DE123456789"]) == [:])
            // Asked again, the plugin would turn it back into upper case.
            #expect(try await client.answers(session)["vat"] == .string("de123456789"))
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.step(session).id == "review")
            #expect(try await client.answers(session)["vat"] == .string("de123456789"), "Continue did not ask again")
            let asked = Self.lines(fixture.daemon.standardError, containing: "normalized a VAT id")
            #expect(asked.count == 1, "\(asked)")
        }
    }

    @Test("a plugin's log lines reach flowd's log under its name, its secure input blanked, and a flood is cut with a count", arguments: [false, true])
    func pluginLogLines(isolated: Bool) async throws {
        try await withDaemon(Self.settings(isolated: isolated)) { fixture in
            let client = fixture.client
            let secret = try await client.startSession(flow: "secret", locale: "en", prefill: [:])
            #expect(try await client.setAnswers(secret, ["pin": "hunter2-sesame"]) == [:])
            let secretLog = await Self.log(of: fixture) { $0.contains("the value was") }
            let echoed = try #require(Self.lines(secretLog, containing: "the value was").first)
            #expect(echoed.contains("(secure value)") && echoed.contains("plugin=test") && echoed.contains("warning:"), "\(echoed)")
            #expect(!fixture.daemon.standardError.contains("hunter2"))

            let session = try await client.startSession(flow: "chatty", locale: "en", prefill: [:])
            #expect(try await client.setAnswers(session, ["note": "go"]) == [:])
            let log = await Self.log(of: fixture) { log in
                let flood = Self.flood(in: log)
                return flood.written.count + flood.suppressed.reduce(0, +) >= 250
            }
            let (written, suppressed) = Self.flood(in: log)
            #expect(!written.isEmpty && written.count < 250, "\(written.count) of 250 lines written")
            #expect(written.allSatisfy {
                $0.contains("plugin=test") && $0.contains("capability=test.chatty") && $0.contains("flow=chatty")
                    && $0.contains("session=\(session)") && $0.contains("plugin_line=")
            })
            #expect(!suppressed.isEmpty, "\(log.suffix(2000))")
            #expect(written.count + suppressed.reduce(0, +) == 250, "every line is written or counted: \(written.count) + \(suppressed)")
        }
    }

    @Test("a plugin's message from its compiled-in catalog follows the fallback chain: de-CH, de-AT → de, fr → en", arguments: [false, true])
    func localizedMessagesFollowTheChain(isolated: Bool) async throws {
        try await withDaemon(Self.settings(isolated: isolated)) { fixture in
            let client = fixture.client
            let expected = [
                "de-CH": "VAT ist keine MWST-Nummer, z. B. CHE123456789.",
                "de-AT": "VAT ist keine USt-IdNr., z. B. DE123456789.",
                "fr": "VAT is not a VAT number, such as DE123456789.",
            ]
            for (locale, message) in expected {
                let session = try await client.startSession(flow: "vat", locale: locale, prefill: [:])
                #expect(try await client.setAnswers(session, ["vat": "nope"])["vat"] == message, "\(locale)")
            }
        }
    }
}
