import DBus
import Logging
import Reactor
import TestSupport

/// A private bus, a server connection driven by a Reactor loop on its own
/// thread with an ObjectServer, and a client-mode connection.
final class BusFixture: @unchecked Sendable {
    let bus: PrivateBus
    let thread: EventLoopThread
    let server: Connection
    /// The server connection's object server, used on the loop only.
    let objects: LoopBound<ObjectServer>
    let client: Connection
    /// What the server connection logged, as `level: message` lines.
    var logged: Locked<[String]> { Locked(log.records.map { "\($0.level.name): \($0.message)" }) }
    private let log = CapturingBackend()

    /// `libdbusClient`: the client connection is read by libdbus, not by
    /// flowd: a connection flowd reads cannot take in file descriptors until
    /// received messages are read without libdbus (`Message(received:)`).
    init(allowUsers: [UInt32] = [], libdbusClient: Bool = false) throws {
        bus = try PrivateBus(allowUsers: allowUsers)
        thread = try EventLoopThread(name: "dbus-server")
        let address = bus.address
        let loop = thread.loop
        let logger = Logger(identifier: "dbus-test", minimumLevel: .debug, backend: log)
        (server, objects) = try thread.sync { () throws(DBusError) -> (Connection, LoopBound<ObjectServer>) in
            let connection = try Connection(.address(address), logger: logger)
            try connection.attach(to: loop)
            return (connection, LoopBound(ObjectServer(connection: connection), loop: loop))
        }
        client = try Connection(.address(address), libdbusReads: libdbusClient)
    }

    deinit {
        client.close()
        let server = self.server
        thread.sync { server.close() }
        thread.stop()
        bus.stop()
    }

    /// The server's unique name, to address calls to.
    var serverName: BusName {
        server.uniqueName ?? ":0.0"
    }

    /// Runs `body` on the server's loop thread and waits for it.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () throws(DBusError) -> T) throws(DBusError) -> T {
        try thread.sync(body)
    }

    /// A proxy on `path`/`interface` of the server, for the client connection.
    func proxy(_ path: ObjectPath, _ interface: InterfaceName, connection: Connection? = nil) -> Proxy {
        Proxy(connection: connection ?? client, destination: serverName, path: path, interface: interface, timeout: .seconds(20))
    }
}

/// The object the integration tests export. Loop-confined state.
final class TestService: @unchecked Sendable {
    var name = "initial"
    var count: UInt32 = 0
    var secret = ""
    var parked: [MethodInvocation] = []
    var onPark: (@Sendable () -> Void)?
    weak var objects: ObjectServer?
    var loop: EventLoop?

    static let interface: InterfaceName = "org.flowd.Test"
    static let path: ObjectPath = "/org/flowd/Test"

    static func table() -> InterfaceTable<TestService> {
        InterfaceTable(
            interface,
            methods: [
                .init("Add", in: [Argument("a", "i"), Argument("b", "i")], out: [Argument("sum", "i")]) { _, call in
                    var args = call.arguments()
                    let a = try args.next(Int32.self)
                    let b = try args.next(Int32.self)
                    call.reply(.int32(a &+ b))
                },
                .init("Echo", in: [Argument("values", "a{sv}")], out: [Argument("values", "a{sv}")]) { _, call in
                    var args = call.arguments()
                    call.reply(typed: try args.next([String: DBusValue].self))
                },
                // The benchmark's "trivial method with an a{sv} argument".
                .init("Store", in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")]) { service, call in
                    var args = call.arguments()
                    let answers = try args.next([String: DBusValue].self)
                    service.count &+= UInt32(answers.count)
                    call.reply(typed: [String: String]())
                },
                .init("Nop") { _, call in call.reply() },
                .init("Fail", in: [Argument("message", "s")]) { _, call in
                    var args = call.arguments()
                    throw DBusError("org.flowd.Test.Error.Refused", try args.next(String.self))
                },
                .init("Crash") { _, _ in
                    struct Internal: Error { let detail = "internal detail" }
                    throw Internal()
                },
                .init("BadReply", out: [Argument("text", "s")]) { _, call in
                    call.reply(.uint32(1))
                },
                .init("Drop") { _, _ in },
                .init("Park", out: [Argument("text", "s")]) { service, call in
                    service.parked.append(call)
                    service.onPark?()
                },
                .init("ReleaseParked", in: [Argument("text", "s")]) { service, call in
                    var args = call.arguments()
                    let text = try args.next(String.self)
                    for parked in service.parked { parked.reply(.string(text)) }
                    service.parked = []
                    call.reply()
                },
                .init("Later", in: [Argument("text", "s")], out: [Argument("text", "s")]) { service, call in
                    var args = call.arguments()
                    let text = try args.next(String.self)
                    // A deferred reply, from another thread after a loop timer.
                    service.loop?.schedule(after: .milliseconds(5)) {
                        try? SystemThread.detach(name: "dbus-test-replier") { call.reply(.string("later: " + text)) }
                    }
                },
                .init("WhoAmI", out: [Argument("uid", "u")]) { service, call in
                    guard let sender = call.sender, let connection = service.objects?.connection else {
                        throw DBusError.failed("no sender")
                    }
                    connection.unixUser(of: sender) { result in
                        switch result {
                        case .success(let uid): call.reply(.uint32(uid))
                        case .failure(let error): call.fail(error)
                        }
                    }
                },
                .init("Emit", in: [Argument("value", "u")]) { service, call in
                    var args = call.arguments()
                    let value = try args.next(UInt32.self)
                    call.reply()
                    try service.objects?.emitSignal("Tick", interface: interface, path: path, arguments: [.uint32(value)])
                },
            ],
            properties: [
                .readWrite("Name", String.self, get: { $0.name }, set: { service, value, _ in
                    guard !value.isEmpty else { throw DBusError.invalidArgs("Name must not be empty") }
                    service.name = value
                }),
                .read("Count", UInt32.self, emitsChange: .invalidates) { $0.count },
                .read("Version", String.self, emitsChange: .const) { _ in "1.0" },
                .init("Secret", .string, access: .write, emitsChange: .no, get: nil, set: { service, value, _ in
                    service.secret = value.string ?? ""
                }),
            ],
            signals: [.init("Tick", [Argument("value", "u")])])
    }
}

extension BusFixture {
    /// Exports a fresh TestService at TestService.path and returns it.
    @discardableResult
    func exportService() throws -> TestService {
        let service = TestService()
        let objects = self.objects
        let loop = thread.loop
        try onLoop { () throws(DBusError) in
            service.objects = objects.value
            service.loop = loop
            try objects.value.export(service, at: TestService.path, interfaces: [TestService.table()])
        }
        return service
    }
}
