import DBus
import FlowClient
import Foundation
import Testing
import TestSupport

/// A caller's own `prefill` against a flow with a prefill provider: the
/// caller's mistake is its error, not a plugin fault in the journal.
@Suite("StartSession's prefill beside a prefill provider")
struct PrefillTests {
    @Test("a caller's prefill that does not fit is InvalidArgs, and nothing blames the provider in the log")
    func callersMistake() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let client = fixture.client
            for _ in 1...3 {
                let message = await expectDBusError(FlowdErrorName.invalidArgs) {
                    _ = try await client.startSession(flow: "providers", locale: nil, prefill: ["even": "not a number"])
                }
                #expect(message?.contains("even") == true, "\(String(describing: message))")
            }
            // A good prefill of the caller's wins over the provider's value.
            let session = try await client.startSession(flow: "providers", locale: nil, prefill: ["who": "Ada"])
            #expect(try await client.step(session).field("who")?.value == .string("Ada"))
            try await client.ping()
            #expect(!fixture.daemon.standardError.contains("prefill provider"), "\(fixture.daemon.standardError)")
            #expect(try await client.listSessions().count == 1, "no session was left by the refused calls")
        }
    }
}
