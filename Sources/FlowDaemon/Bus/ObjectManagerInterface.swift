import DBus
import FlowProtocol
import FlowStore

/// The member table of `org.freedesktop.DBus.ObjectManager` on the Manager
/// object (since 1.1; docs/dbus-api.md), as BlueZ, NetworkManager and
/// UDisks2 offer it: a client learns the caller's sessions in one call and
/// follows them coming and going, without polling `ListSessions`.
///
/// Every entry carries only the sessions' metadata
/// (``SessionProperty/isMetadata``), never an answer. The signals reach whom
/// the session's other signals reach (``SignalAudience``): on the system bus
/// the owner's (and root's) connections that called the session or asked
/// for the managed objects, no one else.
enum ObjectManagerInterface {
    static let table = InterfaceTable<ManagerObject>(
        .objectManager,
        methods: [
            .init(
                FlowMember.ObjectManager.getManagedObjects,
                out: [Argument("objpath_interfaces_and_properties", "a{oa{sa{sv}}}")]
            ) { manager, call in
                let uid = try manager.front.uid(of: call)
                // The sessions ListSessions lists: the caller's own, or every
                // one for root and for a caller polkit lets manage sessions
                // without asking.
                let every = try manager.front.withService { service throws(FlowdError) in try service.listSessions(uid: 0) }
                manager.front.listing(call, uid: uid, of: every) { rows in
                    let front = manager.front
                    do throws(FlowdError) {
                        let sessions = try readable(rows, front)
                        front.noteManager(call.sender, uid: uid, of: sessions.map(\.id))
                        call.reply(.dictionary(
                            keyType: .objectPath, valueType: "a{sa{sv}}",
                            sessions.compactMap { session in
                                FlowBus.sessionPath(of: session.id).map {
                                    DBusDictEntry(key: .objectPath($0), value: interfaces(of: session))
                                }
                            }))
                    } catch {
                        call.fail(error.dbusError)
                    }
                }
            },
        ],
        signals: [
            .init(
                FlowMember.ObjectManager.interfacesAdded,
                [Argument("object_path", "o"), Argument("interfaces_and_properties", "a{sa{sv}}")]),
            .init(FlowMember.ObjectManager.interfacesRemoved, [Argument("object_path", "o"), Argument("interfaces", "as")]),
        ])

    /// The listed sessions as they are now. A session that cannot be read
    /// (its flow is gone until a reload brings it back) is left out, as it
    /// answers `NotFound` on its own path.
    private static func readable(_ rows: [SessionSummary], _ front: BusFrontEnd) throws(FlowdError) -> [SessionProperties] {
        try front.withService { service throws(FlowdError) in
            rows.compactMap { row in try? service.read(row.id) { SessionProperties($0) } }
        }
    }

    /// A session's entry: its one interface with the metadata (`a{sa{sv}}`).
    static func interfaces(of session: SessionProperties) -> DBusValue {
        .dictionary(
            keyType: .string, valueType: "a{sv}",
            [DBusDictEntry(key: .string(FlowBus.sessionInterface.rawValue), value: .vardict(session.metadata))])
    }

    /// `InterfacesAdded`'s arguments (`oa{sa{sv}}`) written from the typed
    /// values: the session's path, then its one interface with the
    /// metadata in declaration order; the values `[.objectPath(path),
    /// interfaces(of: session)]` hold, without a dictionary of
    /// ``DBusValue``s (a generic signal of those cost about 50 k instructions).
    static func writeInterfacesAdded(
        _ path: ObjectPath, _ session: SessionProperties, into body: inout WireEncoder
    ) throws(DBusError) {
        try body.write { (writer) throws(DBusError) in
            writer.string(path.rawValue)
            let interfaces = writer.arrayStart(elementAlignment: 8)
            writer.align(8)
            writer.string(FlowBus.sessionInterface.rawValue)
            let entries = writer.arrayStart(elementAlignment: 8)
            try session.writeMetadata(into: &writer)
            writer.arrayEnd(entries)
            writer.arrayEnd(interfaces)
        }
    }

    /// `InterfacesAdded`'s signature, made once (a literal is validated each time it is made).
    static let interfacesAddedSignature: Signature = "oa{sa{sv}}"

    /// `InterfacesRemoved`'s list: a session object has one interface of its own.
    static let removedInterfaces = DBusValue.strings([FlowBus.sessionInterface.rawValue])
}
