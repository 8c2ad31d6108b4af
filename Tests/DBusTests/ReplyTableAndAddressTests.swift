@testable import DBus
import FlowdSystem
import ReactorTesting
import Testing
import TestSupport

/// The parts of the own receive path that need no bus: which addresses
/// flowd connects to itself, the uid as `EXTERNAL` sends it, and the reply
/// table's timeouts on virtual time.
@Suite("Bus addresses and the reply table")
struct ReplyTableAndAddressTests {
    @Test("unix:path= and unix:abstract= entries are flowd's; anything else stays libdbus'")
    func addresses() {
        #expect(BusAddress.unixSockets("unix:path=/run/dbus/system_bus_socket") == [.path("/run/dbus/system_bus_socket")])
        #expect(BusAddress.unixSockets("unix:path=/tmp/a%20b,guid=0123456789abcdef0123456789abcdef") == [.path("/tmp/a b")])
        #expect(BusAddress.unixSockets("unix:abstract=/tmp/dbus-X;unix:path=/tmp/b") == [.abstract("/tmp/dbus-X"), .path("/tmp/b")])
        for other in [
            "tcp:host=localhost,port=1234", "unix:path=/a;tcp:host=x,port=1", "unix:tmpdir=/tmp", "unix:dir=/tmp",
            "unix:path=/a,abstract=b", "unix:runtime=yes", "unixexec:path=/bin/true", "autolaunch:", "unix:path=",
            "unix:path=/a%zz", "unix:path=/a%00", "", "garbage",
        ] {
            #expect(BusAddress.unixSockets(other) == nil, "\(other)")
        }
    }

    @Test("EXTERNAL sends the uid's decimal digits hex-encoded")
    func externalUID() {
        #expect(BusAuthentication.hexEncoded(0) == "30")
        #expect(BusAuthentication.hexEncoded(1000) == "31303030")
        #expect(BusAuthentication.hexEncoded(4_294_967_295) == "34323934393637323935")
    }

    @Test("a call times out on the loop; its late reply finds no one; the rest fail in order when the connection goes")
    func replyTable() throws {
        let loop = EmbeddedEventLoop()
        let table = ReplyTable()
        let results = Locked<[String]>([])
        func record(_ label: String) -> ReplyTable.Handler {
            { result in
                switch result {
                case .success: results.withLock { $0.append("\(label) ok") }
                case .failure(let error): results.withLock { $0.append("\(label) \(error.name.rawValue)") }
                }
            }
        }
        table.add(serial: 7, timeout: .seconds(1), loop: loop, handler: record("seven"))
        table.add(serial: 3, timeout: .seconds(5), loop: loop, handler: record("three"))
        table.add(serial: 9, timeout: .seconds(5), loop: loop, handler: record("nine"))
        #expect(loop.scheduledTimerCount == 3)
        loop.advanceTime(by: .seconds(1))
        #expect(results.value == ["seven org.freedesktop.DBus.Error.NoReply"])
        #expect(!table.contains(7) && table.count == 2)
        table.remove(9)
        #expect(loop.scheduledTimerCount == 1, "cancelling a call cancels its timer")
        table.failAll(.disconnected("gone"))
        #expect(results.value == ["seven org.freedesktop.DBus.Error.NoReply", "three org.freedesktop.DBus.Error.Disconnected"])
        #expect(table.count == 0 && loop.scheduledTimerCount == 0)
        loop.advanceTime(by: .seconds(10))
        #expect(results.value.count == 2, "nothing is answered twice")
    }
}
