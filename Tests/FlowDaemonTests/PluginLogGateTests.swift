import FlowKit
import FlowdSystem
import Logging
import Synchronization
import Testing
import TestSupport

@testable import FlowDaemon

/// The limit on plugins' own log lines, on a clock the test moves (the
/// same through flowd with a real plugin: PluginSDKTests).
@Suite struct PluginLogGateTests {
    final class TestClock: Sendable {
        let nanoseconds = Mutex<UInt64>(1_000_000_000)
        func advance(_ seconds: UInt64) { nanoseconds.withLock { $0 += seconds * 1_000_000_000 } }
        var now: MonotonicClock.Instant { MonotonicClock.Instant(nanoseconds: nanoseconds.withLock { $0 }) }
    }

    @Test("each plugin writes at most its lines per window; the drops are reported once, then with the next window's first line")
    func windows() {
        let clock = TestClock()
        let gate = PluginLogGate(linesPerWindow: 3, window: .seconds(10), clock: { clock.now })
        #expect((0..<5).map { _ in gate.admit("a") } == [
            .write(suppressedBefore: 0), .write(suppressedBefore: 0), .write(suppressedBefore: 0), .drop, .drop,
        ])
        #expect(gate.admit("b") == .write(suppressedBefore: 0), "another plugin has its own limit")
        #expect(gate.takeUnreported("a") == 2)
        #expect(gate.admit("a") == .drop)
        #expect(gate.takeUnreported("a") == 0, "once per window")
        clock.advance(10)
        #expect(gate.admit("a") == .write(suppressedBefore: 1), "the rest, with the next window's first line")
        #expect(gate.takeUnreported("a") == 0)
    }

    @Test("a call's log: the plugin's fields as PLUGIN_*, bounded, control characters and secure values blanked, debug only when enabled")
    func callLog() {
        let capture = CapturingBackend()
        let logger = Logger(identifier: "flowd", minimumLevel: .info, metadata: [.plugin: "example"], backend: capture)
        let log = PluginCallLog(
            logger: logger, plugin: "example", gate: PluginLogGate(linesPerWindow: 2), secrets: ["s3cret"])
        let plugin = PluginLogger(sink: log)
        plugin.debug("not written")
        plugin.warning("token s3cret\nnext line", ["status": 503, "my-key": "x s3cret"])
        plugin.info("\(String(repeating: "é", count: 5000))")
        plugin.error("over the limit")
        log.finish()
        let records = capture.records
        #expect(records.count == 3, "\(records.map(\.message))")
        #expect(records[0].level == .warning && records[0].message == "token (secure value) next line")
        #expect(records[0].metadata.text(of: LogField(constant: "PLUGIN_STATUS")) == "503")
        #expect(records[0].metadata.text(of: LogField(constant: "PLUGIN_MY_KEY")) == "x (secure value)")
        #expect(records[0].metadata.text(of: .plugin) == "example")
        #expect(records[1].message.count == PluginCallLog.messageLimit)
        #expect(records[2].level == .warning && records[2].message.contains("logged too much: 1 line suppressed"), "\(records[2].message)")
    }
}
