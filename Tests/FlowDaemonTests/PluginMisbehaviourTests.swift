import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// What flowd does with a real plugin (`FixtureOddPlugin`, loaded with
/// dlopen) that hands back values the SDK's types allow but flowd must not
/// take as they are, or that is slow: the session always settles, the fault
/// is the plugin's, and the journal says so under the plugin's name.
@Suite("Plugins that misbehave, through flowd")
struct PluginMisbehaviourTests {
    static let flows: [String: String] = [
        "nan.json": PluginFlows.submitting(id: "nan", action: "odd.nan-receipt"),
        "other.json": """
            { "format": 1, "id": "other", "title": "Other",
              "steps": [{"id": "pick", "title": "Pick",
                         "fields": [{"id": "colour", "type": "choice", "label": "Colour", "optionsFrom": "odd.other-option"}]}] }
            """,
        "slowfield.json": """
            { "format": 1, "id": "slowfield", "title": "Slow field",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "vat", "type": "text", "label": "VAT", "validators": [{"plugin": "odd.slow-field"}]}]}] }
            """,
        "slowstep.json": """
            { "format": 1, "id": "slowstep", "title": "Slow step",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "note", "type": "text", "label": "Note"}],
                         "rules": [{"plugin": "odd.slow-step"}]}] }
            """,
        "localized.json": """
            { "format": 1, "id": "localized", "title": "Localized",
              "steps": [{"id": "one", "title": "One",
                         "fields": [{"id": "vat", "type": "text", "label": "VAT", "validators": [{"plugin": "odd.localized-field"}]}]}] }
            """,
    ]
    /// Plugin calls time out after a fifth of a second here.
    static let settings = DaemonSettings(
        flows: flows, configuration: "[Plugins]\nCallTimeout=200ms\n", plugins: ["FixtureOddPlugin"])

    @Test("a receipt holding NaN and infinities: the session settles as submitted, the numbers are sent as strings, a warning names the plugin")
    func nonFiniteReceipt() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await SubmitTests.onReview(client, "nan")
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == "submitted")
            let receipt = try #require(try await client.property(.receipt, of: session).vardict)
            // The submission id (the session and its revision) is kept as the action gave it.
            #expect(String(describing: receipt["reference"]).contains(session), "\(receipt)")
            #expect(receipt["ratio"] == .string("NaN"))
            let limits = String(describing: receipt["limits"])
            #expect(limits.contains("\"Infinity\"") && limits.contains("\"-Infinity\""), "\(limits)")
            // A second Submit does nothing, as on any submitted session: the action is not run twice.
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == "submitted")
            let log = fixture.daemon.standardError
            #expect(log.split(separator: "\n").filter { $0.contains("session \(session) of ") && $0.contains(" submitted (") }.count == 1, "\(log)")
            #expect(!log.contains("cannot record the end of a submit"), "\(log)")
            let warning = try #require(log.split(separator: "\n").first { $0.contains("not a finite number") }, "\(log)")
            #expect(warning.contains("plugin=odd") && warning.contains("capability=odd.nan-receipt"), "\(warning)")
        }
    }

    @Test("an options provider offering the reserved id other: PluginFailed, logged under the plugin's name")
    func reservedOptionID() async throws {
        try await withDaemon(Self.settings) { fixture in
            let message = await expectDBusError("org.flowd.Flow1.Error.PluginFailed") {
                _ = try await fixture.client.startSession(flow: "other", locale: "en", prefill: [:])
            }
            #expect(message?.contains("odd.other-option") == true, "\(message ?? "")")
            let log = fixture.daemon.standardError
            let line = try #require(log.split(separator: "\n").first { $0.contains("options provider failed") }, "\(log)")
            #expect(line.contains("reserved") && line.contains("plugin=odd") && line.contains("capability=odd.other-option"), "\(line)")
        }
    }

    @Test("field and step validators that time out: the person is told, and each timeout is logged under the plugin's name")
    func validatorTimeoutsAreLogged() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "slowfield", locale: "en", prefill: [:])
            let errors = try await client.setAnswers(session, ["vat": "DE123"])
            #expect(errors["vat"] == "Checking this value took too long. Try again.", "\(errors)")
            let lines = fixture.daemon.standardError.split(separator: "\n")
            let field = try #require(lines.first { $0.contains("timed out") && $0.contains("odd.slow-field") }, "\(lines)")
            #expect(field.contains("plugin=odd ") || field.contains("plugin=odd)"), "\(field)")
            #expect(field.contains("capability=odd.slow-field") && field.contains("field=vat"), "\(field)")
            // The step validator runs on Continue.
            let stepSession = try await client.startSession(flow: "slowstep", locale: "en", prefill: [:])
            #expect(try await client.setAnswers(stepSession, ["note": "n"]) == [:])
            let stepErrors = try await client.continueStep(stepSession)
            #expect(!stepErrors.isEmpty, "a step rule that timed out fails closed")
            let after = fixture.daemon.standardError.split(separator: "\n")
            let step = try #require(after.first { $0.contains("timed out") && $0.contains("odd.slow-step") }, "\(after)")
            #expect(step.contains("plugin=odd ") || step.contains("plugin=odd)"), "\(step)")
            #expect(step.contains("capability=odd.slow-step") && step.contains("step=one"), "\(step)")
        }
    }

    @Test("a validator that throws LocalizedFailure: the value is refused with the generic message (docs/plugins.md, Errors)")
    func validatorLocalizedFailure() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "localized", locale: "en", prefill: [:])
            let errors = try await client.setAnswers(session, ["vat": "DE123"])
            #expect(errors["vat"] == "Couldn't check this value.", "\(errors)")
            let line = try #require(
                fixture.daemon.standardError.split(separator: "\n").first { $0.contains("The register cannot be reached") })
            #expect(line.contains("plugin=odd") && line.contains("capability=odd.localized-field"), "\(line)")
        }
    }
}
