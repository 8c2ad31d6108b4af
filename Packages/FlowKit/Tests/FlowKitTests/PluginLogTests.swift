import FlowKit
import FlowKitTesting
import Testing

/// A plugin's log as the SDK gives it: lines reach the context's sink
/// with their level and typed fields; a plain context drops them.
@Suite struct PluginLogTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "HTTP 503" }
    }

    @Test("every level reaches the sink, with its message and fields, in order")
    func levelsAndFields() {
        let log = TestLog()
        let context = PluginContext.testing(log: log)
        let count = 3
        context.log.debug("looked at \(count) rows in \(Duration.milliseconds(250))")
        context.log.info("sent", ["server": "crm.example", "status": 200, "ratio": 0.5, "retried": false])
        context.log.notice("fell back to \("the cache")")
        context.log.warning("slow server: \(Failure())")
        context.log.error("gave up after \(2) tries", ["status": .integer(503)])
        #expect(log.entries.map(\.level) == PluginLogLevel.allCases)
        #expect(log.messages() == [
            "looked at 3 rows in 0.25 seconds", "sent", "fell back to the cache", "slow server: HTTP 503",
            "gave up after 2 tries",
        ])
        #expect(log.entries[1].fields == ["server": .text("crm.example"), "status": .integer(200), "ratio": .number(0.5), "retried": .bool(false)])
        #expect(log.messages(at: .error) == ["gave up after 2 tries"])
        log.clear()
        #expect(log.entries.isEmpty)
    }

    @Test("a context made with the initializer drops what is logged; the levels are ordered")
    func discardingAndOrder() {
        let context = PluginContext(
            flowID: "f", sessionID: "", locale: "en", callerUID: 0, answers: [:], options: [:], stateDirectory: "")
        #expect(context.log.sink == nil)
        context.log.error("nobody hears this")
        #expect(PluginLogLevel.allCases == PluginLogLevel.allCases.sorted())
        #expect(PluginLogLevel.debug < PluginLogLevel.error)
        #expect(PluginLogValue.number(0.25).description == "0.25" && PluginLogValue.bool(true).description == "true")
    }

    @Test("entries and field reviews survive a round trip through JSON (a host may carry them to another process)")
    func entriesAreCodable() throws {
        let entry = PluginLogEntry(level: .warning, message: "retry", fields: ["n": 2, "host": "a", "ok": true, "x": 1.5])
        #expect(try JSONCoder.decode(PluginLogEntry.self, from: JSONCoder.encode(entry)) == entry)
        let reviews: [FieldReview] = [
            .accepted(normalizedTo: .text("DE1")), FieldReview(.rejected("No.")), FieldReview(.warning("Hm."), normalizedValue: .integer(2)),
            FieldReview(.accepted),
        ]
        #expect(try JSONCoder.decode([FieldReview].self, from: JSONCoder.encode(reviews)) == reviews)
    }
}

/// Deadlines in seconds, as an API that takes a `Double` wants them.
@Suite struct SecondsTests {
    @Test func durationsAndTheContextInSeconds() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.zero.inSeconds == 0)
        #expect(PluginContext.testing().secondsRemaining == nil)
        let left = PluginContext.testing(timeLimit: .seconds(60)).secondsRemaining
        #expect(left.map { $0 > 0 && $0 <= 60 } == true)
    }
}
