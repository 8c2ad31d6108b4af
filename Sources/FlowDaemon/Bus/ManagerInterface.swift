import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import Reactor

/// The Manager object (``FlowBus/managerPath``).
struct ManagerObject: Sendable {
    let bound: LoopBound<BusFrontEnd>
    var front: BusFrontEnd { bound.value }
}

/// The member table of the Manager interface (docs/dbus-api.md).
enum ManagerInterface {
    static let table = InterfaceTable<ManagerObject>(
        FlowBus.managerInterface,
        methods: [
            .init(FlowMember.Manager.listFlows, out: [Argument("flows", "aa{sv}")]) { manager, call in
                let flows = try manager.front.withService { $0.catalog.sortedFlows }
                call.reply(.array(elementType: "a{sv}", flows.map { FlowSummary($0.definition).dbusValue }))
            },
            .init(
                FlowMember.Manager.listFlowsWithOptions, in: [Argument("options", "a{sv}")], out: [Argument("flows", "aa{sv}")]
            ) { manager, call in
                var args = call.arguments()
                let locale = try listOptions(try args.next([String: DBusValue].self))
                let flows = try manager.front.withService { $0.catalog.sortedFlows }
                call.reply(.array(elementType: "a{sv}", flows.map { entry in
                    (locale.map { FlowSummary(entry.definition, locale: $0) } ?? FlowSummary(entry.definition)).dbusValue
                }))
            },
            .init(
                FlowMember.Manager.startSession, in: [Argument("flow", "s"), Argument("options", "a{sv}")],
                out: [Argument("session", "o")]
            ) { manager, call in
                var args = call.arguments()
                let flow = try args.next(String.self)
                let options = try args.next([String: DBusValue].self)
                let front = manager.front
                try ValueMapping.checkLength(flow, what: "the flow id", limits: front.limits)
                let (locale, prefill, answers) = try startOptions(options, limits: front.limits)
                let uid = try front.uid(of: call)
                let sender = call.sender
                let bound = manager.bound
                let start: @Sendable () -> Void = {
                    let front = bound.value
                    let reply: Reply<String> = front.reply(to: call) { id, call in
                        bound.value.noteCreator(sender, of: id)
                        guard let path = FlowBus.sessionPath(of: id) else {
                            return call.fail(FlowdError.failed("internal error: the new session's id is malformed"))
                        }
                        call.reply(.objectPath(path))
                    }
                    front.act {
                        $0.startSession(flowID: flow, locale: locale, prefill: prefill, answers: answers, uid: uid, reply: reply)
                    }
                }
                // A flow that names a polkit action (its `authorization`) is
                // authorized now that its id is known; an unknown flow is the
                // service's NotFound.
                guard let action = try front.withService({ $0.catalog.flow(flow)?.authorization }) else { return start() }
                front.authorize(call, .startFlow(flow, action)) { refusal in
                    if let refusal { call.fail(refusal) } else { start() }
                }
            },
            .init(FlowMember.Manager.listSessions, out: [Argument("sessions", "a(ssos)")]) { manager, call in
                let uid = try manager.front.uid(of: call)
                // The caller's own sessions, or every one for root and for a
                // caller polkit lets manage sessions without asking.
                let every = try manager.front.withService { service throws(FlowdError) in try service.listSessions(uid: 0) }
                manager.front.listing(call, uid: uid, of: every) { call.reply(sessionListings($0)) }
            },
            .init(FlowMember.Manager.getSession, in: [Argument("id", "s")], out: [Argument("session", "o")]) { manager, call in
                var args = call.arguments()
                let id = try args.next(String.self)
                guard let path = FlowBus.sessionPath(of: id) else {
                    throw FlowdError.invalidArgs("\"\(id.prefix(64))\" is not a session id (32 lowercase hex characters)")
                }
                // The owner, root, or polkit's manage-sessions, as for the
                // session's own members.
                manager.front.authorize(call, .sessionOwner(id)) { refusal in
                    if let refusal { call.fail(refusal) } else { call.reply(.objectPath(path)) }
                }
            },
            .init(FlowMember.Manager.listPlugins, out: [Argument("plugins", "aa{sv}")]) { manager, call in
                call.reply(.array(elementType: "a{sv}", manager.front.settings.plugins().map(\.dbusValue)))
            },
            .init(FlowMember.Manager.getStatus, out: [Argument("status", "a{sv}")]) { manager, call in
                call.reply(manager.front.status().dbusValue)
            },
            .init(FlowMember.Manager.reload) { manager, call in
                // Root, or polkit's reload on the system bus (CallerRule.manager).
                manager.front.finish(call, manager.front.reload())
            },
        ],
        properties: [
            .read(ManagerProperty.version.name, String.self, emitsChange: .const) { $0.front.settings.version },
            .read(ManagerProperty.sessionCount.name, UInt32.self) { manager in
                UInt32(clamping: try manager.front.withService { $0.sessionCount })
            },
        ],
        signals: [
            .init(ManagerSignal.sessionNewMember, [Argument("id", "s"), Argument("session", "o")]),
            .init(ManagerSignal.sessionRemovedMember, [Argument("id", "s"), Argument("session", "o")]),
        ])

    /// `ListSessions`' reply. The store's ids and states are the daemon's
    /// own: a row that is not (a damaged database) is left out, not sent.
    static func sessionListings(_ sessions: [SessionSummary]) -> DBusValue {
        let listings = sessions.compactMap { row in
            SessionState(rawValue: row.state).flatMap { SessionListing(id: row.id, flowID: row.flowID, state: $0) }
        }
        return .array(elementType: SessionListing.signature, listings.map(\.dbusValue))
    }

    /// The `StartSession` options: `locale` (s), `prefill` (a{sv}) and,
    /// since 1.1, `answers` (a{sv}: answers for every step, which drive the
    /// new session as far as they are valid).
    static func startOptions(
        _ options: [String: DBusValue], limits: SessionLimits
    ) throws(FlowdError) -> (locale: String?, prefill: [String: AnswerValue], answers: [String: AnswerValue]) {
        var locale: String?
        var prefill: [String: AnswerValue] = [:]
        var answers: [String: AnswerValue] = [:]
        for (key, value) in options {
            switch key {
            case "locale":
                guard case .string(let s) = value else {
                    throw .invalidArgs("option locale has D-Bus type '\(value.signature)'; expected 's'")
                }
                locale = try localeTag(s)
            case "prefill", "answers":
                guard case .dictionary(.string, .variant, let entries) = value else {
                    throw .invalidArgs("option \(key) has D-Bus type '\(value.signature)'; expected 'a{sv}'")
                }
                var dict: [String: DBusValue] = [:]
                for entry in entries {
                    guard case .string(let k) = entry.key else { continue }
                    dict[k] = entry.value.variantValue ?? entry.value
                }
                if key == "prefill" {
                    prefill = try ValueMapping.answers(dict, limits: limits)
                } else {
                    answers = try ValueMapping.answers(dict, limits: limits, maxCount: ValueMapping.maxAnswerFileEntries(limits))
                }
            default:
                throw .invalidArgs("unknown option \"\(key.prefix(64))\" (expected locale, prefill or answers)")
            }
        }
        return (locale, prefill, answers)
    }

    /// A locale tag a caller sent (the `locale` options, `SetLocale`), bounded
    /// before anything parses it; the engine refuses one that is no tag.
    static func localeTag(_ tag: String) throws(FlowdError) -> String {
        guard tag.utf8.count <= 35 else { throw .invalidArgs("\"\(tag.prefix(64))…\" is too long for a locale tag") }
        return tag
    }

    /// The `ListFlowsWithOptions` options (since 1.1): `locale` (s), the
    /// language of each entry's `title` and `description`.
    static func listOptions(_ options: [String: DBusValue]) throws(FlowdError) -> String? {
        var locale: String?
        for (key, value) in options {
            guard key == "locale" else { throw .invalidArgs("unknown option \"\(key.prefix(64))\" (expected locale)") }
            guard case .string(let s) = value else {
                throw .invalidArgs("option locale has D-Bus type '\(value.signature)'; expected 's'")
            }
            guard let normalized = LocaleFallback.requested(try localeTag(s)) else {
                throw .invalidArgs("\"\(s)\" is not a locale tag (expected one like \"en\" or \"pt-BR\")")
            }
            locale = normalized
        }
        return locale
    }
}
