import DBus

/// Which bus flowctl talks to, from `--system`, `--user` or `--address`.
public enum BusChoice: Sendable, Hashable {
    /// The system bus: the system service.
    case system
    /// The session bus: the per-user service (the default, like flowd's).
    case user
    /// A bus at a D-Bus address.
    case address(String)

    /// The options that select this bus again, for hints such as the resume command.
    public var commandLineOptions: [String] {
        switch self {
        case .system: return ["--system"]
        case .user: return []
        case .address(let address): return ["--address", address]
        }
    }

    /// "the session bus", "the system bus", "the bus at ADDR".
    public var displayName: String {
        switch self {
        case .system: return "the system bus"
        case .user: return "the session bus"
        case .address(let address): return "the bus at \(address)"
        }
    }

    /// The command that starts flowd on this bus; for an address, the
    /// executable at `flowd` (see ``FlowdLocation``).
    public func startCommand(flowd: String = FlowdLocation.installed) -> String {
        switch self {
        case .system: return "systemctl start flowd"
        case .user: return "systemctl --user start flowd"
        case .address(let address): return "\(shellQuoted(flowd)) --address \(shellQuoted(address))"
        }
    }
}

/// ``FlowService`` over D-Bus contract v1, with blocking calls on a private
/// client-mode ``Connection``. The connection is opened on the first call.
public final class BusFlowService: FlowService {
    /// `org.flowd.Flow1`.
    public static let busName: BusName = "org.flowd.Flow1"
    /// `/org/flowd/Flow1`.
    public static let managerPath: ObjectPath = "/org/flowd/Flow1"
    /// `org.flowd.Flow1.Manager`.
    public static let managerInterface: InterfaceName = "org.flowd.Flow1.Manager"
    /// `org.flowd.Flow1.Session`.
    public static let sessionInterface: InterfaceName = "org.flowd.Flow1.Session"

    /// The bus this service talks to.
    public let bus: BusChoice
    /// How long an ordinary call waits for its reply.
    public let timeout: Duration
    private var openedConnection: Connection?
    private var sessionPaths: [String: ObjectPath] = [:]

    /// The daemon's path for the "Start it with" hint; nil: found when needed.
    public let flowd: String?

    /// A service on `bus`; nothing is connected until the first call.
    public init(bus: BusChoice, timeout: Duration = .seconds(25), flowd: String? = nil) {
        self.bus = bus
        self.timeout = timeout
        self.flowd = flowd
    }

    deinit {
        openedConnection?.close()
    }

    /// Submit (and the Continue that submits) waits as long as the action runs;
    /// the daemon bounds it with the flow's `timeoutSeconds`.
    private static let submitTimeout = Duration.seconds(3_000_000)

    private func connection() throws(ServiceError) -> Connection {
        if let openedConnection { return openedConnection }
        let target: Connection.Bus
        switch bus {
        case .system: target = .system
        case .user: target = .session
        case .address(let address): target = .address(address)
        }
        do {
            let opened = try Connection(target, logger: .discard)
            openedConnection = opened
            return opened
        } catch {
            var message = "cannot connect to \(bus.displayName): \(error.message)"
            if case .user = bus { message += " (is this a desktop or user session? For the system service use --system)" }
            throw ServiceError(.unavailable, message, name: error.name.rawValue)
        }
    }

    private func manager() throws(ServiceError) -> Proxy {
        Proxy(connection: try connection(), destination: Self.busName, path: Self.managerPath,
              interface: Self.managerInterface, timeout: timeout)
    }

    private func session(_ id: String, timeout: Duration? = nil) throws(ServiceError) -> Proxy {
        let path: ObjectPath
        if let known = sessionPaths[id] {
            path = known
        } else {
            let manager = try manager()
            path = try call("GetSession") { () throws(DBusError) in
                try manager.call("GetSession", .string(id), returning: ObjectPath.self)
            }
            sessionPaths[id] = path
        }
        return Proxy(connection: try connection(), destination: Self.busName, path: path,
                     interface: Self.sessionInterface, timeout: timeout ?? self.timeout)
    }

    /// Runs one D-Bus exchange and turns its failure into a ``ServiceError``.
    private func call<T>(_ member: String, _ body: () throws(DBusError) -> T) throws(ServiceError) -> T {
        do {
            return try body()
        } catch {
            throw classify(error, member: member)
        }
    }

    /// Maps a D-Bus error to a ``ServiceError``.
    func classify(_ error: DBusError, member: String) -> ServiceError {
        let name = error.name.rawValue
        if name.hasPrefix(ServiceError.errorPrefix) {
            let suffix = String(name.dropFirst(ServiceError.errorPrefix.count))
            return ServiceError(ServiceError.Kind(rawValue: suffix) ?? .other, error.message, name: name)
        }
        var notRunning: String {
            let command = bus.startCommand(flowd: flowd ?? FlowdLocation.current())
            return "flowd is not running on \(bus.displayName). Start it with: \(command)"
        }
        switch error.name {
        case .serviceUnknown, .nameHasNoOwner:
            return ServiceError(.unavailable, notRunning, name: name)
        case .noReply:
            return ServiceError(.unavailable, "flowd did not answer \(member) in time (\(error.message))", name: name)
        case .disconnected, .noServer, .ioError:
            return ServiceError(.unavailable, "lost the connection to \(bus.displayName): \(error.message)", name: name)
        case .accessDenied:
            return ServiceError(.accessDenied, error.message, name: name)
        case .invalidArgs:
            return ServiceError(.invalidArgs, error.message, name: name)
        case .unknownObject:
            return ServiceError(.notFound, "the session no longer exists (\(error.message))", name: name)
        case .unknownMethod, .unknownInterface, .unknownProperty:
            return ServiceError(
                .protocolMismatch, "flowd does not understand \(member); is it an older version? (\(error.message))",
                name: name)
        default:
            if name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") || name.hasPrefix("org.freedesktop.systemd1.") {
                return ServiceError(.unavailable, "\(notRunning) (activation failed: \(error.message))", name: name)
            }
            return ServiceError(.other, error.message, name: name)
        }
    }

    // MARK: Manager

    /// `Manager.ListFlows`.
    public func listFlows() throws(ServiceError) -> [FlowSummary] {
        let manager = try manager()
        let dicts = try call("ListFlows") { () throws(DBusError) in
            try manager.call("ListFlows", returning: [[String: DBusValue]].self)
        }
        var flows: [FlowSummary] = []
        for dict in dicts { flows.append(try ReplyDecoder.flow(dict)) }
        return flows
    }

    /// `Manager.StartSession` with the `locale` option; the id is the path's last element.
    public func startSession(flow: String, locale: String?) throws(ServiceError) -> String {
        var options: [String: DBusValue] = [:]
        if let locale { options["locale"] = .string(locale) }
        let manager = try manager()
        let path = try call("StartSession") { () throws(DBusError) in
            try manager.call("StartSession", .string(flow), .vardict(options), returning: ObjectPath.self)
        }
        guard let last = path.lastComponent else {
            throw ServiceError(.protocolMismatch, "StartSession returned the path \(path), which names no session")
        }
        let id = String(last)
        sessionPaths[id] = path
        return id
    }

    /// `Manager.ListSessions`.
    public func listSessions() throws(ServiceError) -> [SessionSummary] {
        let manager = try manager()
        let rows = try call("ListSessions") { () throws(DBusError) in
            try manager.call("ListSessions", returning: [DBusStruct<String, String, ObjectPath, String>].self)
        }
        return rows.map { row in
            let (id, flow, path, state) = row.fields
            return SessionSummary(id: id, flow: flow, path: path.rawValue, state: state)
        }
    }

    /// `Manager.ListPlugins`.
    public func plugins() throws(ServiceError) -> [PluginSummary] {
        let manager = try manager()
        let dicts = try call("ListPlugins") { () throws(DBusError) in
            try manager.call("ListPlugins", returning: [[String: DBusValue]].self)
        }
        var plugins: [PluginSummary] = []
        for dict in dicts { plugins.append(try ReplyDecoder.plugin(dict)) }
        return plugins
    }

    // MARK: Session

    /// `Session.GetStep`.
    public func step(_ session: String) throws(ServiceError) -> StepPage {
        let proxy = try self.session(session)
        let dict = try call("GetStep") { () throws(DBusError) in
            try proxy.call("GetStep", returning: [String: DBusValue].self)
        }
        return try ReplyDecoder.step(dict)
    }

    /// `Session.SetAnswers`.
    public func setAnswers(_ session: String, _ answers: [String: DBusValue]) throws(ServiceError) -> [String: String] {
        let proxy = try self.session(session)
        return try call("SetAnswers") { () throws(DBusError) in
            try proxy.call("SetAnswers", .vardict(answers), returning: [String: String].self)
        }
    }

    /// `Session.Continue`, waiting as long as a submit it starts.
    public func continueStep(_ session: String) throws(ServiceError) -> [String: String] {
        // On the last step of a flow without Review, Continue is Submit.
        let proxy = try self.session(session, timeout: Self.submitTimeout)
        return try call("Continue") { () throws(DBusError) in
            try proxy.call("Continue", returning: [String: String].self)
        }
    }

    /// `Session.Back`.
    public func back(_ session: String) throws(ServiceError) {
        let proxy = try self.session(session)
        _ = try call("Back") { () throws(DBusError) in try proxy.call("Back") }
    }

    /// `Session.GoTo`.
    public func goTo(_ session: String, step: String) throws(ServiceError) {
        let proxy = try self.session(session)
        _ = try call("GoTo") { () throws(DBusError) in try proxy.call("GoTo", .string(step)) }
    }

    /// `Session.GetReview`.
    public func review(_ session: String) throws(ServiceError) -> ReviewPage {
        let proxy = try self.session(session)
        let (groups, note) = try call("GetReview") { () throws(DBusError) in
            var reader = try proxy.call("GetReview").arguments()
            return (try reader.next([[String: DBusValue]].self), try reader.next(String.self))
        }
        return try ReplyDecoder.review(groups: groups, note: note)
    }

    /// `Session.GetAnswers`.
    public func answers(_ session: String) throws(ServiceError) -> [String: DBusValue] {
        let proxy = try self.session(session)
        return try call("GetAnswers") { () throws(DBusError) in
            try proxy.call("GetAnswers", returning: [String: DBusValue].self)
        }
    }

    /// `Session.Submit`, waiting until the action ends.
    public func submit(_ session: String) throws(ServiceError) {
        let proxy = try self.session(session, timeout: Self.submitTimeout)
        _ = try call("Submit") { () throws(DBusError) in try proxy.call("Submit") }
    }

    /// `Session.Cancel`.
    public func cancel(_ session: String) throws(ServiceError) {
        let proxy = try self.session(session)
        _ = try call("Cancel") { () throws(DBusError) in try proxy.call("Cancel") }
    }

    /// `Session.Close`; forgets the path.
    public func close(_ session: String) throws(ServiceError) {
        let proxy = try self.session(session)
        _ = try call("Close") { () throws(DBusError) in try proxy.call("Close") }
        sessionPaths[session] = nil
    }

    /// `Properties.GetAll` of the session interface.
    public func properties(_ session: String) throws(ServiceError) -> SessionProperties {
        let proxy = try self.session(session)
        let dict = try call("GetAll") { () throws(DBusError) in try proxy.allProperties() }
        return ReplyDecoder.properties(dict, id: session)
    }

    /// Adds match rules for the session's signals, its removal and flowd leaving the bus, then calls
    /// `GetStep` so that a daemon that signals only to its callers includes this one.
    public func events(_ session: String) throws(ServiceError) -> any SessionEventSource {
        let proxy = try self.session(session)
        let connection = try connection()
        let rules = [
            MatchRule(sender: Self.busName, path: proxy.path),
            MatchRule(sender: Self.busName, interface: Self.managerInterface, member: "SessionRemoved",
                      path: Self.managerPath, arguments: [0: session]),
            MatchRule.nameOwnerChanged(for: Self.busName),
        ]
        for rule in rules {
            try call("AddMatch") { () throws(DBusError) in try connection.addMatch(rule) }
        }
        // The daemon may send a session's signals only to connections that
        // have called it: call it once the rules are in place.
        _ = try call("GetStep") { () throws(DBusError) in try proxy.call("GetStep") }
        return BusEventSource(connection: connection, sessionID: session, service: self)
    }
}

/// A session's signals read from a client-mode connection.
final class BusEventSource: SessionEventSource {
    private let connection: Connection
    private let sessionID: String
    private let service: BusFlowService

    init(connection: Connection, sessionID: String, service: BusFlowService) {
        self.connection = connection
        self.sessionID = sessionID
        self.service = service
    }

    func next(timeout: Duration) throws(ServiceError) -> SessionEvent? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return nil }
            let message: Message?
            do {
                message = try connection.nextSignal(timeout: remaining)
            } catch {
                throw service.classify(error, member: "watch")
            }
            guard let message else { return nil }
            if message.member?.rawValue == "NameOwnerChanged", message.sender == .bus {
                var reader = message.arguments()
                let name = try? reader.next(String.self)
                _ = try? reader.next(String.self)
                let newOwner = try? reader.next(String.self)
                if name == BusFlowService.busName.rawValue, newOwner?.isEmpty ?? false {
                    throw ServiceError(.unavailable, "flowd left \(service.bus.displayName)")
                }
                continue
            }
            if let event = ReplyDecoder.event(message, sessionID: sessionID) { return event }
        }
    }
}

/// `text` quoted for a POSIX shell when it needs it.
func shellQuoted(_ text: String) -> String {
    let safe = text.unicodeScalars.allSatisfy { scalar in
        (scalar.value < 128 && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil))
            || "-_./:=,@%+".unicodeScalars.contains(scalar)
    }
    if safe && !text.isEmpty { return text }
    return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}
