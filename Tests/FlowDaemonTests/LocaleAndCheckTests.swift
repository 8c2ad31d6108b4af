import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// API 1.1's `CheckAnswers`, `SetLocale` with the locale and flow title
/// properties, and `ListFlowsWithOptions` (docs/dbus-api.md): called through
/// FlowClient's typed calls, with what they must leave alone (properties,
/// signals) watched on a raw connection.
@Suite("CheckAnswers, SetLocale and localized flow listings")
struct LocaleAndCheckTests {
    @Test("CheckAnswers replies SetAnswers' errors without storing or signalling anything")
    func checkAnswers() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("trip")
            #expect(try await client.continueStep(session) == [:])
            let raw = try fixture.raw()
            try raw.watchFlowd()
            let proxy = raw.session(id: session)
            let updated = try proxy.property("UpdatedAt")
            _ = try raw.drainSignals()

            let bad: [String: DBusValue] = ["name": .string("A")]
            let checked = try await client.checkAnswers(session, bad)
            #expect(checked["name"]?.isEmpty == false, "\(checked)")
            #expect(try await client.answers(session)["name"] == nil, "nothing was stored")
            #expect(try proxy.property("UpdatedAt") == updated)
            let quiet = try raw.drainSignals(timeout: .seconds(1))
            #expect(quiet.isEmpty, "\(quiet.map { $0.member?.rawValue ?? "" })")
            // The same errors as SetAnswers gives for the same answers.
            #expect(try await client.setAnswers(session, bad) == checked)
            let good: [String: DBusValue] = ["name": .string("Ada"), "email": .string("ada@example.org")]
            #expect(try await client.checkAnswers(session, good).isEmpty)
            #expect(try await client.answers(session)["name"] == .string("A"), "CheckAnswers left the stored answer alone")

            // The same refusals as SetAnswers.
            await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try await client.checkAnswers(session, ["nope": .string("x")])
            }
            await expectDBusError(FlowdErrorName.dbusInvalidArgs) { _ = try proxy.call("CheckAnswers", .string("name")) }
        }
    }

    @Test("SetLocale changes the session's language: Locale, RequestedLocale, EffectiveLocale, FlowTitle and labels follow, signalled")
    func setLocale() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "trip", locale: "en", prefill: [:])
            let raw = try fixture.raw()
            try raw.watchFlowd()
            let proxy = raw.session(id: session)
            #expect(try proxy.property("FlowTitle") == .string("Plan a trip"))
            #expect(try proxy.property("EffectiveLocale") == .string("en"))
            let english = try await client.step(session)
            _ = try raw.drainSignals()

            try await client.setLocale(session, "de_DE.UTF-8")
            #expect(try proxy.property("Locale") == .string("de-DE"))
            #expect(try proxy.property("RequestedLocale") == .string("de-DE"))
            #expect(try proxy.property("EffectiveLocale") == .string("de"))
            #expect(try proxy.property("FlowTitle") == .string("Eine Reise planen"))
            let german = try await client.step(session)
            #expect(german.continueLabel != english.continueLabel, "flowd's own labels follow")
            #expect(german.flowTitle == "Eine Reise planen")
            let messages = try raw.drainSignals { messages in messages.contains { $0.member == "PropertiesChanged" } }
            let changed = messages.filter { $0.member == "PropertiesChanged" }.compactMap { message -> [String: DBusValue]? in
                var reader = message.arguments()
                _ = try? reader.next(String.self)
                return try? reader.next([String: DBusValue].self)
            }
            #expect(changed.contains { $0["Locale"] == .string("de-DE") && $0["FlowTitle"] == .string("Eine Reise planen") },
                    "\(changed)")
            // A change of language is no new event: the announcement is reworded, not said again.
            #expect(!messages.contains { $0.member == "Announcement" })

            // A language the flow is not written in: asked for, and shown in the one it resolves to.
            try await client.setLocale(session, "ar")
            #expect(try proxy.property("RequestedLocale") == .string("ar"))
            #expect(try proxy.property("EffectiveLocale") == .string("en"))
            #expect(try proxy.property("FlowTitle") == .string("Plan a trip"))

            await expectDBusError(FlowdErrorName.invalidArgs) { try await client.setLocale(session, "not a locale!") }
            await expectDBusError(FlowdErrorName.invalidArgs) { try await client.setLocale(session, String(repeating: "a", count: 100)) }
            #expect(try proxy.property("RequestedLocale") == .string("ar"), "a refused SetLocale changes nothing")
        }
    }

    @Test("a submitted session refuses SetAnswers and CheckAnswers with InvalidState, as documented")
    func settledRefusesAnswers() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let session = try await SubmitTests.onReview(fixture.client, "echo")
            try await fixture.client.submit(session)
            let proxy = try fixture.raw().session(id: session)
            for member in ["SetAnswers", "CheckAnswers"] {
                let message = await expectDBusError(FlowdErrorName.invalidState, "\(member)") {
                    _ = try proxy.call(MemberName(trusted: member), .vardict(["name": .string("Grace")]))
                }
                #expect(message?.contains("submitted") == true, "\(String(describing: message))")
            }
            // The typed call gets the same refusal, as a FlowClientError of flowd's kind.
            let refused = await #expect(throws: FlowClientError.self) {
                _ = try await fixture.client.checkAnswers(session, ["name": .string("Grace")])
            }
            #expect(refused?.kind == .flowd(.invalidState))
        }
    }

    @Test("ListFlowsWithOptions gives titles and descriptions in the caller's locale; ListFlows stays as it was")
    func listFlowsWithLocale() async throws {
        try await withDaemon { fixture in
            let raw = try fixture.raw()
            func entries(_ reply: Message) throws -> [String: [String: DBusValue]] {
                var reader = reply.arguments()
                let list = try reader.next([[String: DBusValue]].self)
                return Dictionary(uniqueKeysWithValues: list.compactMap { entry in entry["id"]?.string.map { ($0, entry) } })
            }
            let german = try entries(try raw.manager.call("ListFlowsWithOptions", .vardict(["locale": .string("de")])))
            #expect(german["trip"]?["title"] == .string("Eine Reise planen"))
            #expect(german["trip"]?["locale"] == .string("de"))
            let plain = try entries(try raw.manager.call("ListFlows"))
            #expect(plain["trip"]?["title"] == .string("Plan a trip"))
            #expect(plain["trip"]?["locale"] == nil, "ListFlows keeps its 1.0 keys")
            let none = try entries(try raw.manager.call("ListFlowsWithOptions", .vardict([:])))
            #expect(none == plain)

            // The typed call: the same texts, read into FlowSummary.
            let client = fixture.client
            let typed = try #require(try await client.listFlows(locale: "de_DE.UTF-8").first { $0.id == "trip" })
            #expect((typed.title, typed.locale) == ("Eine Reise planen", "de"))
            #expect(typed.titles["en"] == "Plan a trip", "every translation is still there")
            let fallback = try #require(try await client.listFlows(locale: "pt-BR").first { $0.id == "trip" })
            #expect((fallback.title, fallback.locale) == ("Plan a trip", "en"), "a language the flow lacks falls back")
            let untyped = try #require(try await client.listFlows().first { $0.id == "trip" })
            #expect(untyped.locale.isEmpty && untyped.title == "Plan a trip")
            await expectDBusError(FlowdErrorName.invalidArgs) { _ = try await client.listFlows(locale: "not a locale!") }
            await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try raw.manager.call("ListFlowsWithOptions", .vardict(["colour": .string("red")]))
            }
            await expectDBusError(FlowdErrorName.invalidArgs) {
                _ = try raw.manager.call("ListFlowsWithOptions", .vardict(["locale": .uint32(1)]))
            }
        }
    }
}
