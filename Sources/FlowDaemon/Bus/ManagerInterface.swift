import DBus
import FlowEngine
import FlowKit
import FlowStore

/// The object at `/org/flowd/Flow1`.
struct ManagerObject: Sendable {
    let front: BusFrontEnd
}

/// The member table of `org.flowd.Flow1.Manager` (docs/dbus-api.md).
enum ManagerInterface {
    static let table = InterfaceTable<ManagerObject>(
        BusFrontEnd.managerInterface,
        methods: [
            .init("ListFlows", out: [Argument("flows", "aa{sv}")]) { manager, call in
                let flows = try manager.front.withService { $0.catalog.sortedFlows }
                call.reply(.vardicts(flows.map { flowSummary($0.definition) }))
            },
            .init(
                "StartSession", in: [Argument("flow", "s"), Argument("options", "a{sv}")],
                out: [Argument("session", "o")]
            ) { manager, call in
                var args = call.arguments()
                let flow = try args.next(String.self)
                let options = try args.next([String: DBusValue].self)
                let front = manager.front
                let limits = try front.withService { $0.configuration.limits }
                try ValueMapping.checkLength(flow, what: "the flow id", limits: limits)
                let (locale, prefill) = try startOptions(options, limits: limits)
                let uid = try front.uid(of: call)
                let sender = call.sender
                Task {
                    let result: Result<String, FlowdError>
                    do throws(FlowdError) {
                        result = .success(
                            try await front.service.startSession(flowID: flow, locale: locale, prefill: prefill, uid: uid))
                    } catch {
                        result = .failure(error)
                    }
                    front.loop.execute {
                        switch result {
                        case .success(let id):
                            if let sender { front.noteCreator(sender, of: id) }
                            call.reply(.objectPath(SessionObject.path(of: id)))
                        case .failure(let error):
                            call.fail(error)
                        }
                        front.flush()
                    }
                }
            },
            .init("ListSessions", out: [Argument("sessions", "a(ssos)")]) { manager, call in
                let uid = try manager.front.uid(of: call)
                let sessions = try manager.front.withService { service throws(FlowdError) in try service.listSessions(uid: uid) }
                call.reply(
                    .array(
                        elementType: "(ssos)",
                        sessions.map {
                            .structure([
                                .string($0.id), .string($0.flowID), .objectPath(SessionObject.path(of: $0.id)),
                                .string($0.state),
                            ])
                        }))
            },
            .init("GetSession", in: [Argument("id", "s")], out: [Argument("session", "o")]) { manager, call in
                var args = call.arguments()
                let id = try args.next(String.self)
                guard SessionID.isValid(id) else {
                    throw FlowdError.invalidArgs("\"\(id.prefix(64))\" is not a session id (32 lowercase hex characters)")
                }
                let uid = try manager.front.uid(of: call)
                try manager.front.withService { service throws(FlowdError) in try service.authorize(id, uid: uid) }
                call.reply(.objectPath(SessionObject.path(of: id)))
            },
            .init("ListPlugins", out: [Argument("plugins", "aa{sv}")]) { manager, call in
                call.reply(.vardicts(manager.front.pluginList()))
            },
            .init("Reload") { manager, call in
                let uid = try manager.front.uid(of: call)
                guard uid == 0 else { throw FlowdError.accessDenied("only root may reload flowd") }
                manager.front.finish(call, manager.front.reloadConfiguration())
            },
        ],
        properties: [
            .read("Version", String.self, emitsChange: .const) { $0.front.version },
            .read("SessionCount", UInt32.self) { manager in
                UInt32(clamping: manager.front.service.assumeIsolated { $0.sessionCount })
            },
        ],
        signals: [
            .init("SessionNew", [Argument("id", "s"), Argument("session", "o")]),
            .init("SessionRemoved", [Argument("id", "s"), Argument("session", "o")]),
        ])

    /// One entry of `ListFlows`.
    static func flowSummary(_ flow: FlowDefinition) -> [String: DBusValue] {
        var titles: [String: String] = [:]
        for t in flow.title.translations { titles[t.locale] = t.text }
        if let plain = flow.title.plain { titles["en"] = titles["en"] ?? plain }
        return [
            "id": .string(flow.id), "title": .string(flow.title.resolve(flow.locales.first ?? "en")),
            "titles": .stringDictionary(titles), "description": .string(flow.description?.resolve(flow.locales.first ?? "en") ?? ""),
            "locales": .strings(flow.locales), "steps": .uint32(UInt32(clamping: flow.steps.count)),
            "review": .bool(flow.hasReview),
        ]
    }

    /// The `StartSession` options: `locale` (s) and `prefill` (a{sv}).
    static func startOptions(
        _ options: [String: DBusValue], limits: SessionLimits
    ) throws(FlowdError) -> (locale: String?, prefill: [String: AnswerValue]) {
        var locale: String?
        var prefill: [String: AnswerValue] = [:]
        for (key, value) in options {
            switch key {
            case "locale":
                guard case .string(let s) = value else {
                    throw .invalidArgs("option locale has D-Bus type '\(value.signature)'; expected 's'")
                }
                guard s.utf8.count <= 35 else { throw .invalidArgs("option locale is too long for a locale tag") }
                locale = s
            case "prefill":
                guard case .dictionary(.string, .variant, let entries) = value else {
                    throw .invalidArgs("option prefill has D-Bus type '\(value.signature)'; expected 'a{sv}'")
                }
                var dict: [String: DBusValue] = [:]
                for entry in entries {
                    guard case .string(let k) = entry.key else { continue }
                    dict[k] = entry.value.variantValue ?? entry.value
                }
                prefill = try ValueMapping.answers(dict, limits: limits)
            default:
                throw .invalidArgs("unknown option \"\(key.prefix(64))\" (expected locale or prefill)")
            }
        }
        return (locale, prefill)
    }
}
