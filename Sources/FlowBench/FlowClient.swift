import DBus

/// One client connection to flowd in client mode (blocking calls), with
/// the calls the benchmark makes. Every call builds its message afresh, the
/// Ping floor included, so the client's own cost is the same on both sides
/// of a ratio.
final class FlowClient {
    static let busName: BusName = "org.flowd.Flow1"
    static let managerPath: ObjectPath = "/org/flowd/Flow1"
    static let manager: InterfaceName = "org.flowd.Flow1.Manager"
    static let session: InterfaceName = "org.flowd.Flow1.Session"

    let connection: Connection

    init(address: String) throws(BenchError) {
        do {
            connection = try Connection(.address(address))
        } catch {
            throw .call("cannot connect to the private bus: \(error.message)")
        }
    }

    deinit { connection.close() }

    static func path(of id: String) -> ObjectPath {
        ObjectPath(trusted: "/org/flowd/Flow1/session/" + id)
    }

    private func call(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [DBusValue] = []
    ) throws(BenchError) -> Message {
        let message = Message.methodCall(destination: Self.busName, path: path, interface: interface, member: member)
        do {
            if !arguments.isEmpty { try message.append(contentsOf: arguments) }
            return try connection.call(message, timeout: .seconds(120))
        } catch {
            throw .call("\(member) on \(path): \(error.message)")
        }
    }

    /// `org.freedesktop.DBus.Peer.Ping` to flowd: the floor. libdbus answers
    /// it inside flowd's dispatch, so it is the bus round trip and flowd's
    /// wake-up, without any of flowd's own code.
    func ping() throws(BenchError) {
        _ = try call(Self.managerPath, .peer, "Ping")
    }

    /// `SetAnswers` with one answer; returns the number of field errors.
    @discardableResult
    func setAnswers(_ id: String, _ answers: [String: DBusValue]) throws(BenchError) -> Int {
        let reply = try call(Self.path(of: id), Self.session, "SetAnswers", [.vardict(answers)])
        return try errorCount(reply)
    }

    /// `Continue`; returns the number of errors (0: it moved).
    @discardableResult
    func continueStep(_ id: String) throws(BenchError) -> Int {
        try errorCount(try call(Self.path(of: id), Self.session, "Continue"))
    }

    /// `GetStep`; returns the step id.
    @discardableResult
    func getStep(_ id: String) throws(BenchError) -> String {
        let reply = try call(Self.path(of: id), Self.session, "GetStep")
        var reader = reply.arguments()
        do {
            let step = try reader.next([String: DBusValue].self)
            return step["id"]?.string ?? ""
        } catch {
            throw .call("GetStep on \(id): unexpected reply: \(error.message)")
        }
    }

    /// `Back`.
    func back(_ id: String) throws(BenchError) {
        _ = try call(Self.path(of: id), Self.session, "Back")
    }

    /// `StartSession(flow, {})`; returns the new session's id.
    func startSession(_ flow: String) throws(BenchError) -> String {
        let reply = try call(Self.managerPath, Self.manager, "StartSession", [.string(flow), .vardict([:])])
        var reader = reply.arguments()
        do {
            let path = try reader.next(ObjectPath.self)
            return String(path.lastComponent ?? "")
        } catch {
            throw .call("StartSession: unexpected reply: \(error.message)")
        }
    }

    /// `org.freedesktop.DBus.Properties.Get(Manager, "Version")`.
    func version() throws(BenchError) -> String {
        let reply = try call(Self.managerPath, .properties, "Get", [.string(Self.manager.rawValue), .string("Version")])
        var reader = reply.arguments()
        do {
            guard case .variant(let value) = try reader.nextValue() else { return "" }
            return value.string ?? ""
        } catch {
            throw .call("Properties.Get(Version): unexpected reply: \(error.message)")
        }
    }

    /// `Close`.
    func close(_ id: String) throws(BenchError) {
        _ = try call(Self.path(of: id), Self.session, "Close")
    }

    private func errorCount(_ reply: Message) throws(BenchError) -> Int {
        var reader = reply.arguments()
        do {
            return try reader.next([String: String].self).count
        } catch {
            throw .call("unexpected reply: \(error.message)")
        }
    }
}
