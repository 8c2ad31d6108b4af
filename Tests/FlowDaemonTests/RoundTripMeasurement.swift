import DBus
import FlowClient
import Foundation
import Testing
import TestSupport

/// Not a test of speed (nothing is asserted about time): prints how long a
/// `SetAnswers` round trip to the real flowd takes next to a `Peer.Ping`
/// round trip to the same daemon on the same client. Run it with
/// `FLOWD_MEASURE=1 swift test --skip-build --filter DaemonRoundTrip`; the
/// figures depend on the build configuration (say which one you quote).
@Suite("Daemon round-trip measurement")
struct DaemonRoundTrip {
    @Test("SetAnswers vs Peer.Ping through dbus-daemon, 2,000 calls each on one connection",
          .enabled(if: ProcessInfo.processInfo.environment["FLOWD_MEASURE"] == "1"))
    func measure() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("durable")
            let calls = 2000
            var counter = 0
            func setOnce() async throws {
                counter += 1
                let errors = try await client.setAnswers(session, ["n": .string("value \(counter)")])
                #expect(errors.isEmpty)
            }
            func pingOnce() async throws { try await client.ping() }
            // Warm up both paths, then alternate rounds so that drift hits both alike.
            for _ in 0..<200 {
                try await setOnce()
                try await pingOnce()
            }
            let clock = ContinuousClock()
            var ping = Duration.zero
            var set = Duration.zero
            let rounds = 10
            for _ in 0..<rounds {
                var start = clock.now
                for _ in 0..<(calls / rounds) { try await pingOnce() }
                ping += start.duration(to: clock.now)
                start = clock.now
                for _ in 0..<(calls / rounds) { try await setOnce() }
                set += start.duration(to: clock.now)
            }
            func micros(_ d: Duration) -> Double {
                Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
            }
            print(String(
                format: "flowd round trips over %d calls each: Peer.Ping %.1f µs, SetAnswers %.1f µs, ratio %.2f",
                calls, micros(ping) / Double(calls), micros(set) / Double(calls), micros(set) / micros(ping)))
            #expect(try await client.step(session).field("n")?.value == .string("value \(counter)"))
        }
    }
}
