import DBus
import Foundation
import Testing
import TestSupport

/// Not a test of speed (nothing is asserted about time): it prints how long
/// Peer.Ping and a trivial a{sv} method take through the object server, for
/// the performance notes. Run it with FLOWD_MEASURE=1.
@Suite("Round-trip measurement")
struct RoundTripMeasurement {
    @Test("Peer.Ping vs an a{sv} method, 10,000 calls each on one connection",
          .enabled(if: ProcessInfo.processInfo.environment["FLOWD_MEASURE"] == "1"))
    func measure() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        let ping = Message.methodCall(destination: fixture.serverName, path: TestService.path, interface: .peer, member: "Ping")
        let answers: [String: DBusValue] = ["name": "Ada Lovelace", "email": "ada@example.org", "count": .int64(3)]
        let calls = 10_000

        func pingOnce() throws {
            // A fresh message each time: a message can be sent only once.
            let message = Message.methodCall(destination: fixture.serverName, path: TestService.path, interface: .peer, member: "Ping")
            _ = try fixture.client.call(message)
        }
        func storeOnce() throws {
            let message = Message.methodCall(destination: fixture.serverName, path: TestService.path,
                                             interface: TestService.interface, member: "Store")
            var writer = message.appender()
            try writer.append(answers)
            var reply = try fixture.client.call(message).arguments()
            _ = try reply.next([String: String].self)
        }
        _ = ping
        let clock = ContinuousClock()
        func nopOnce() throws {
            let message = Message.methodCall(destination: fixture.serverName, path: TestService.path,
                                             interface: TestService.interface, member: "Nop")
            _ = try fixture.client.call(message)
        }
        // In-process cost of encoding and decoding the a{sv}, without the bus.
        let encode = try clock.measure {
            for _ in 0..<calls {
                let message = Message.methodCall(destination: fixture.serverName, path: TestService.path,
                                                 interface: TestService.interface, member: "Store")
                try message.append(typed: answers)
            }
        }
        let sample = Message.methodCall(destination: nil, path: TestService.path, interface: TestService.interface, member: "Store")
        try sample.append(typed: answers)
        let decode = try clock.measure {
            for _ in 0..<calls {
                var reader = sample.arguments()
                _ = try reader.next([String: DBusValue].self)
            }
        }
        print("in-process per call: build+encode \(encode / calls), decode \(decode / calls)")
        // Warm up both paths, then alternate rounds so drift hits both alike.
        for _ in 0..<500 { try pingOnce(); try storeOnce() }
        var pingTime = Duration.zero
        var storeTime = Duration.zero
        var nopTime = Duration.zero
        let rounds = 10
        for _ in 0..<rounds {
            pingTime += try clock.measure { for _ in 0..<(calls / rounds) { try pingOnce() } }
            storeTime += try clock.measure { for _ in 0..<(calls / rounds) { try storeOnce() } }
            nopTime += try clock.measure { for _ in 0..<(calls / rounds) { try nopOnce() } }
        }
        let pingMicros = Double(pingTime.components.seconds) * 1e6 + Double(pingTime.components.attoseconds) / 1e12
        let storeMicros = Double(storeTime.components.seconds) * 1e6 + Double(storeTime.components.attoseconds) / 1e12
        let nopMicros = Double(nopTime.components.seconds) * 1e6 + Double(nopTime.components.attoseconds) / 1e12
        print(String(format: "no-argument method through the object server: %.1f µs", nopMicros / Double(calls)))
        print(String(format: "round trip over %d calls: Peer.Ping %.1f µs, Store(a{sv}) %.1f µs, ratio %.2f",
                     calls, pingMicros / Double(calls), storeMicros / Double(calls), storeMicros / pingMicros))
        #expect(try test.property("Count", as: UInt32.self) > 0)
    }
}
