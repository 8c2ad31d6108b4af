import DBus
import FlowProtocol

// The typed calls: one per member of docs/dbus-api.md. Sessions are named
// by their 32-hex id.

extension FlowClient {
    // MARK: - Manager

    /// `ListFlows`: the flows flowd serves.
    package func listFlows() async throws(FlowClientError) -> [FlowSummary] {
        try await list(FlowMember.Manager.listFlows, of: FlowSummary.init(dbusValue:))
    }

    /// `ListFlowsWithOptions` with the `locale` option (since 1.1): the
    /// flows with each one's ``FlowSummary/title`` and
    /// ``FlowSummary/description`` in `locale` (flowd's fallback:
    /// `pt-BR → pt → en → first`), and ``FlowSummary/locale`` the flow
    /// locale they resolved to. A malformed tag is `InvalidArgs`; a 1.0
    /// flowd answers ``FlowClientError/Kind/protocolMismatch``.
    package func listFlows(locale: String) async throws(FlowClientError) -> [FlowSummary] {
        let options: [String: DBusValue] = ["locale": .string(locale)]
        return try await list(FlowMember.Manager.listFlowsWithOptions, [.vardict(options)], of: FlowSummary.init(dbusValue:))
    }

    /// `StartSession` with the `locale` option (flowd's default when nil),
    /// `prefill` answers and (since 1.1) `answers` for every step, which
    /// drive the new session as far as they are valid; returns the new
    /// session's id.
    package func startSession(
        flow: String, locale: String?, prefill: [String: DBusValue], answers: [String: DBusValue] = [:]
    ) async throws(FlowClientError) -> String {
        var options: [String: DBusValue] = [:]
        if let locale { options["locale"] = .string(locale) }
        if !prefill.isEmpty { options["prefill"] = .vardict(prefill) }
        if !answers.isEmpty { options["answers"] = .vardict(answers) }
        let member = FlowMember.Manager.startSession
        let arguments = try Self.arguments(of: try await callManager(member, [.string(flow), .vardict(options)]), member, "o")
        guard let path = arguments[0].objectPath, let id = FlowBus.sessionID(of: path) else {
            throw FlowClientError(.protocolMismatch, "flowd's \(member) reply is not a session's path")
        }
        return id
    }

    /// `ListSessions`: the caller's sessions (every session for root).
    package func listSessions() async throws(FlowClientError) -> [SessionListing] {
        try await list(FlowMember.Manager.listSessions, of: SessionListing.init(dbusValue:), entry: SessionListing.signature)
    }

    /// `GetSession`: the session's path once flowd checked that it exists
    /// and belongs to the caller.
    package func getSession(_ id: String) async throws(FlowClientError) -> ObjectPath {
        let member = FlowMember.Manager.getSession
        let arguments = try Self.arguments(of: try await callManager(member, [.string(id)]), member, "o")
        guard let path = arguments[0].objectPath else {
            throw FlowClientError(.protocolMismatch, "flowd's \(member) reply is not a path")
        }
        return path
    }

    /// `ListPlugins`: the plugins flowd found, loaded or not.
    package func listPlugins() async throws(FlowClientError) -> [PluginSummary] {
        try await list(FlowMember.Manager.listPlugins, of: PluginSummary.init(dbusValue:))
    }

    /// `GetStatus` (since 1.2): the daemon's version, uptime, sessions,
    /// flows, plugins, limits and state directory.
    package func status() async throws(FlowClientError) -> DaemonStatus {
        let member = FlowMember.Manager.getStatus
        let arguments = try Self.arguments(of: try await callManager(member), member, "a{sv}")
        return try Self.decode(member) { () throws(WireError) in try DaemonStatus(dbusValue: arguments[0]) }
    }

    /// `Reload`: root, the user a per-user flowd runs as, or a caller polkit authorizes.
    package func reload() async throws(FlowClientError) {
        _ = try Self.arguments(of: try await callManager(FlowMember.Manager.reload), FlowMember.Manager.reload, "")
    }

    /// The Manager's `Version` property.
    package func version() async throws(FlowClientError) -> String {
        try await managerProperty(.version, String.self)
    }

    /// The Manager's `SessionCount` property.
    package func sessionCount() async throws(FlowClientError) -> UInt32 {
        try await managerProperty(.sessionCount, UInt32.self)
    }

    /// `org.freedesktop.DBus.Peer.Ping` to flowd's Manager object. libdbus
    /// answers it in flowd's dispatch, so it costs a round trip and none
    /// of flowd's own work; flowd also sends the signals of every call it
    /// answered before it, so when it returns they have all arrived.
    package func ping() async throws(FlowClientError) {
        _ = try await call("Ping", path: FlowBus.managerPath, interface: .peer)
    }

    // MARK: - Session

    /// `GetStep`: the current step.
    package func step(_ session: String) async throws(FlowClientError) -> StepPage {
        let member = FlowMember.Session.getStep
        let reply = try await call(member, session: session)
        try Self.expect(reply, member, "a{sv}")
        var reader = reply.arguments()
        do {
            return try StepPage(dbus: try reader.next([String: DBusValue].self))
        } catch let error as WireError {
            throw FlowClientError(error, member: member)
        } catch {
            throw FlowClientError(.protocolMismatch, "flowd's \(member) reply cannot be read: \(error)")
        }
    }

    /// `SetAnswers`: stores answers of the current step's fields; returns
    /// their errors (field id → message; only fields with an error).
    @discardableResult
    package func setAnswers(_ session: String, _ answers: [String: DBusValue]) async throws(FlowClientError) -> [String: String] {
        try await fieldErrors(FlowMember.Session.setAnswers, session, [.vardict(answers)])
    }

    /// `Continue`: empty when the session moved on, otherwise why not. On
    /// the last step of a flow without Review it submits, so it waits as
    /// long as `Submit`.
    @discardableResult
    package func continueStep(_ session: String) async throws(FlowClientError) -> [String: String] {
        try await fieldErrors(FlowMember.Session.continueStep, session, [], timeout: configuration.submitTimeout)
    }

    /// `CheckAnswers` (since 1.1): the errors `SetAnswers` would reply for
    /// `answers` (field id → message; plugin validators included, and the
    /// same refusals), with nothing stored and nothing signalled: for
    /// validating as the person types.
    package func checkAnswers(_ session: String, _ answers: [String: DBusValue]) async throws(FlowClientError) -> [String: String] {
        try await fieldErrors(FlowMember.Session.checkAnswers, session, [.vardict(answers)])
    }

    /// `SetLocale` (since 1.1): the session's language from now on (BCP 47
    /// or a POSIX locale name; flowd normalizes it). A malformed tag is
    /// `InvalidArgs`, and nothing changes.
    package func setLocale(_ session: String, _ locale: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.setLocale, session, [.string(locale)])
    }

    /// `Back`.
    package func back(_ session: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.back, session)
    }

    /// `GoTo`: a visited step, or `review`.
    package func goTo(_ session: String, step: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.goTo, session, [.string(step)])
    }

    /// `GetReview`.
    package func review(_ session: String) async throws(FlowClientError) -> ReviewPage {
        let member = FlowMember.Session.getReview
        let arguments = try Self.arguments(of: try await call(member, session: session), member, "aa{sv}s")
        return try Self.decode(member) { () throws(WireError) in try ReviewPage(dbusArguments: arguments) }
    }

    /// `GetAnswers`: the answers on the path, secure fields left out.
    package func answers(_ session: String) async throws(FlowClientError) -> [String: DBusValue] {
        let member = FlowMember.Session.getAnswers
        let arguments = try Self.arguments(of: try await call(member, session: session), member, "a{sv}")
        return arguments[0].vardict ?? [:]
    }

    /// `Submit`: waits until the action ends (up to ``Configuration/submitTimeout``).
    package func submit(_ session: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.submit, session, timeout: configuration.submitTimeout)
    }

    /// `Cancel`: stops an in-flight submit.
    package func cancel(_ session: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.cancel, session)
    }

    /// `Close`: deletes the session.
    package func close(_ session: String) async throws(FlowClientError) {
        try await noReplyValue(FlowMember.Session.close, session)
        watched.remove(session)
    }

    /// Every property of the session (`Properties.GetAll`).
    package func properties(_ session: String) async throws(FlowClientError) -> SessionProperties {
        let member: MemberName = "GetAll"
        let reply = try await call(
            member, path: try Self.path(of: session), interface: .properties,
            [.string(FlowBus.sessionInterface.rawValue)])
        let arguments = try Self.arguments(of: reply, member, "a{sv}")
        return try Self.decode(member) { () throws(WireError) in try SessionProperties(dbus: arguments[0].vardict ?? [:]) }
    }

    /// One property of the session (`Properties.Get`), checked to have its type.
    package func property(_ property: SessionProperty, of session: String) async throws(FlowClientError) -> DBusValue {
        let value = try await get(property.rawValue, path: try Self.path(of: session), interface: FlowBus.sessionInterface)
        guard value.hasType(property.signature) else {
            throw FlowClientError(
                .protocolMismatch,
                "flowd's \(property.rawValue) has type '\(value.signature)', expected '\(property.signature)'")
        }
        return value
    }

    // MARK: - Helpers

    /// A Manager call whose reply is one array of `entry`, each decoded by `decode`.
    private func list<T>(
        _ member: MemberName, _ arguments: [DBusValue] = [], of decode: (DBusValue) throws(WireError) -> T,
        entry: Signature = "a{sv}"
    ) async throws(FlowClientError) -> [T] {
        let signature = Signature(trusted: "a" + entry.rawValue)
        let reply = try Self.arguments(of: try await callManager(member, arguments), member, signature)
        return try Self.decode(member) { () throws(WireError) in
            try (reply[0].elements ?? []).map { (element) throws(WireError) in try decode(element) }
        }
    }

    private func managerProperty<T: DBusRepresentable>(
        _ property: ManagerProperty, _ type: T.Type
    ) async throws(FlowClientError) -> T {
        let value = try await get(property.rawValue, path: FlowBus.managerPath, interface: FlowBus.managerInterface)
        guard let typed = T(dbusValue: value) else {
            throw FlowClientError(
                .protocolMismatch, "flowd's \(property.rawValue) has type '\(value.signature)', expected '\(T.dbusSignature)'")
        }
        return typed
    }

    /// `Properties.Get`: the value inside the variant.
    private func get(_ name: String, path: ObjectPath, interface: InterfaceName) async throws(FlowClientError) -> DBusValue {
        let member: MemberName = "Get"
        let reply = try await call(member, path: path, interface: .properties, [.string(interface.rawValue), .string(name)])
        let arguments = try Self.arguments(of: reply, member, "v")
        return arguments[0].variantValue ?? arguments[0]
    }

    /// A call whose reply is the field errors `a{ss}`.
    private func fieldErrors(
        _ member: MemberName, _ session: String, _ arguments: [DBusValue], timeout: Duration? = nil
    ) async throws(FlowClientError) -> [String: String] {
        let reply = try await call(member, session: session, arguments, timeout: timeout)
        try Self.expect(reply, member, "a{ss}")
        var reader = reply.arguments()
        do {
            return try reader.next([String: String].self)
        } catch {
            throw FlowClientError(.protocolMismatch, "flowd's \(member) reply cannot be read: \(error.message)")
        }
    }

    /// A call whose reply carries nothing.
    private func noReplyValue(
        _ member: MemberName, _ session: String, _ arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(FlowClientError) {
        try Self.expect(try await call(member, session: session, arguments, timeout: timeout), member, "")
    }

    /// Refuses a reply whose signature is not `signature`.
    private static func expect(_ reply: Message, _ member: MemberName, _ signature: Signature) throws(FlowClientError) {
        guard reply.hasSignature(signature) else {
            throw FlowClientError(
                .protocolMismatch, "flowd's \(member) reply has the signature '\(reply.signature)', expected '\(signature)'")
        }
    }

    /// The reply's arguments, once its signature is checked to be `signature`.
    private static func arguments(
        of reply: Message, _ member: MemberName, _ signature: Signature
    ) throws(FlowClientError) -> [DBusValue] {
        try expect(reply, member, signature)
        do {
            return try reply.readArguments()
        } catch {
            throw FlowClientError(.protocolMismatch, "flowd's \(member) reply cannot be read: \(error.message)")
        }
    }

    /// Runs a wire decoder, reporting its failure as the reply of `member`.
    private static func decode<T>(_ member: MemberName, _ body: () throws(WireError) -> T) throws(FlowClientError) -> T {
        do {
            return try body()
        } catch {
            throw FlowClientError(error, member: member)
        }
    }
}
