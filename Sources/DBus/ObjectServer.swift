import Logging
import Synchronization

/// What an ``Authorizer`` decided about a call.
package enum AuthorizationVerdict: Sendable {
    /// The call proceeds now.
    case allow
    /// The call is refused with this error, now.
    case refuse(DBusError)
    /// Not known yet (the caller's uid is asked of the bus, polkit is
    /// asked): `start` is run once with the completion, which may be called
    /// now or later from any thread, `nil` to let the call proceed.
    case later(_ start: @Sendable (_ proceed: @escaping @Sendable (DBusError?) -> Void) -> Void)

    /// Hands the verdict to `proceed`: at once, or once `start` calls it.
    package func run(_ proceed: @escaping @Sendable (DBusError?) -> Void) {
        switch self {
        case .allow: proceed(nil)
        case .refuse(let error): proceed(error)
        case .later(let start): start(proceed)
        }
    }
}

/// Decides, before any handler runs, whether a call may proceed. A verdict
/// known at once (a known caller, the common case) runs the handler without
/// a completion made for it (no closure, no flag: docs/performance.md, H1);
/// ``AuthorizationVerdict/later(_:)`` defers it. Runs for the registration's
/// own interfaces and for `Properties`, not for `Introspect` or `Peer`.
package typealias Authorizer<Target> = @Sendable (_ target: Target, _ call: MethodInvocation) -> AuthorizationVerdict

/// Lists the child nodes of `path` (a tree's prefix, or a path below it)
/// that `caller` may see: calls `done` once, now or later from any thread.
/// A tree may show each caller only the objects it may call.
package typealias ChildLister = @Sendable (
    _ path: ObjectPath, _ caller: BusName?, _ done: @escaping @Sendable ([String]) -> Void
) -> Void

/// Serves objects on a ``Connection``: routes method calls to member tables,
/// checks signatures, and implements `Introspectable`, `Properties` and (for
/// calls without an interface) `Peer` from the same tables.
///
/// Objects are exported at exact paths, or as a *tree* under a prefix with a
/// resolver (path → object or nil), so thousands of objects need no
/// registration each. Keep the server alive as long as it should answer (the
/// connection holds it weakly). Loop thread only.
package final class ObjectServer: MethodCallHandler {
    /// The connection served.
    package let connection: Connection
    private var exact: [String: any AnyRegistration] = [:]
    /// The lengths of the exact paths: a call to a tree's object (a path of
    /// another length) is routed without hashing its path.
    private var exactLengths: [Int] = []
    /// Trees, longest prefix first.
    private var trees: [any AnyRegistration] = []

    /// Becomes `connection`'s method-call handler.
    package init(connection: Connection) {
        self.connection = connection
        connection.core.methodHandler = self
    }

    // MARK: registration

    /// Exports `target` at `path` with `interfaces`.
    package func export<Target: Sendable>(
        _ target: Target, at path: ObjectPath, interfaces: [InterfaceTable<Target>],
        authorize: Authorizer<Target>? = nil
    ) throws(DBusError) {
        connection.requireLoopThread()
        guard exact[path.rawValue] == nil else { throw .failed("an object is already exported at \(path)") }
        exact[path.rawValue] = try Registration(
            path: path, isTree: false, tables: interfaces, authorize: authorize, children: nil, logger: connection.logger,
            resolve: { $0 == path ? target : nil })
        if !exactLengths.contains(path.rawValue.utf8.count) { exactLengths.append(path.rawValue.utf8.count) }
    }

    /// Exports a tree: every path strictly below `prefix` for which `resolve`
    /// returns an object is served with `interfaces` (for example
    /// `/org/example/Forms1/session/<id>`). `children` lists the child names
    /// shown to the caller when a path of the tree (the prefix included) is
    /// introspected.
    package func exportTree<Target: Sendable>(
        under prefix: ObjectPath, interfaces: [InterfaceTable<Target>], authorize: Authorizer<Target>? = nil,
        children: ChildLister? = nil,
        resolve: @escaping @Sendable (ObjectPath) -> Target?
    ) throws(DBusError) {
        connection.requireLoopThread()
        guard !trees.contains(where: { $0.path == prefix }) else { throw .failed("a tree is already exported under \(prefix)") }
        // The routing checks the prefix before it resolves (``handleMethodCall(_:)``).
        let registration = try Registration(
            path: prefix, isTree: true, tables: interfaces, authorize: authorize, children: children,
            logger: connection.logger, resolve: resolve)
        trees.append(registration)
        trees.sort { $0.path.rawValue.utf8.count > $1.path.rawValue.utf8.count }
    }

    /// The registration serving `path`, with the object resolved.
    private func lookup(_ path: ObjectPath) -> (any AnyRegistration)? {
        if let registration = exact[path.rawValue] { return registration }
        for tree in trees where tree.serves(path) { return tree }
        return nil
    }

    // MARK: dispatch

    func handleMethodCall(_ message: Message) -> Bool {
        guard let path = message.path, let member = message.member else { return false }
        let interface = message.interface
        if exactLengths.contains(path.rawValue.utf8.count), let registration = exact[path.rawValue] {
            if registration.dispatch(message, path: path, interface: interface, member: member, server: self) { return true }
        } else {
            // Longest prefix first; the resolver runs once per call.
            for tree in trees where tree.path.isAncestor(of: path) {
                if tree.dispatch(message, path: path, interface: interface, member: member, server: self) { return true }
            }
        }
        // No object here, but maybe objects below it: answer Introspect and
        // Peer. A tree's root is such a node even when it lists no children
        // for this caller: its parent lists it.
        if !childNames(of: path).isEmpty || isTreeRoot(path) {
            if (interface == nil || interface == .introspectable) && member == "Introspect" {
                answerIntrospect(message, path: path, interfaces: Introspection.nodeInterfaces)
                return true
            }
            if answerPeer(message, interface: interface, member: member) { return true }
        }
        connection.replyIfWanted(to: message, error: .unknownObject("No object at path \(path)"))
        return true
    }

    /// `Ping` and `GetMachineId` without an interface name (calls that name
    /// `org.freedesktop.DBus.Peer` are answered before any table: by the
    /// own receive path on a bus connection, by libdbus peer-to-peer).
    func answerPeer(_ message: Message, interface: InterfaceName?, member: MemberName) -> Bool {
        guard interface == nil || interface == .peer else { return false }
        switch member.rawValue {
        case "Ping":
            connection.returnIfWanted(to: message)
            return true
        case "GetMachineId":
            let reply = message.makeReturn()
            if let id = LibDBus.machineID(), (try? reply.append(.string(id))) != nil {
                connection.replyIfWanted(to: message, with: reply)
            } else {
                connection.replyIfWanted(to: message, error: .failed("The machine id is not available."))
            }
            return true
        default:
            return false
        }
    }

    func reply(to message: Message, introspection xml: String) {
        let reply = message.makeReturn()
        do {
            try reply.append(.string(xml))
            connection.replyIfWanted(to: message, with: reply)
        } catch {
            connection.replyIfWanted(to: message, error: .failed("Cannot encode the introspection data."))
        }
    }

    /// True when a tree is registered at `path` itself.
    func isTreeRoot(_ path: ObjectPath) -> Bool {
        trees.contains { $0.path == path }
    }

    /// The child node names of `path` that are the same for every caller:
    /// the next element toward every exported object and tree below it.
    /// What a tree lists at or below its prefix depends on the caller
    /// (``answerIntrospect(_:path:interfaces:)``).
    func childNames(of path: ObjectPath) -> [String] {
        var names: Set<String> = []
        for key in exact.keys {
            let other = ObjectPath(trusted: key)
            if let child = path.childComponent(toward: other) { names.insert(String(child)) }
        }
        for tree in trees {
            if let child = path.childComponent(toward: tree.path) { names.insert(String(child)) }
        }
        return names.sorted()
    }

    /// Answers `Introspect` of `path` with `interfaces` and the child nodes
    /// the caller may see: ``childNames(of:)`` and what the innermost tree
    /// at or above `path` lists for the caller (which may take a bus round
    /// trip to learn who the caller is).
    func answerIntrospect(_ message: Message, path: ObjectPath, interfaces: [String]) {
        let known = childNames(of: path)
        guard let tree = trees.first(where: { $0.path == path || $0.path.isAncestor(of: path) }) else {
            return reply(to: message, introspection: Introspection.document(interfaces: interfaces, children: known))
        }
        let invocation = MethodInvocation(
            message: message, path: path, interface: .introspectable, member: "Introspect", replySignature: "s",
            core: connection.core)
        tree.listChildren(of: path, caller: message.sender) { listed in
            let children = Set(known).union(listed).sorted()
            invocation.reply(.string(Introspection.document(interfaces: interfaces, children: children)))
        }
    }

    // MARK: emitting

    /// Emits a signal from `path`. When the object's table declares the signal,
    /// the arguments must match its declared signature. `destination` unicasts it.
    /// Loop thread (it reads the registrations).
    package func emitSignal(
        _ member: MemberName, interface: InterfaceName, path: ObjectPath, arguments: [DBusValue] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        connection.requireLoopThread()
        var text = ""
        for argument in arguments { argument.appendSignature(to: &text) }
        let signature = Signature(trusted: text)
        if let declared = lookup(path)?.signalSignature(interface: interface, member: member), declared != signature {
            throw .invalidArgs("signal \(interface).\(member) is declared with '\(declared)', got '\(signature)'")
        }
        // Written straight into wire format (``WireEncoder``); file
        // descriptors travel beside the bytes, so a signal carrying one is
        // built by libdbus.
        if arguments.contains(where: \.containsUnixFD) {
            let message = Message.signal(path: path, interface: interface, member: member)
            try message.append(contentsOf: arguments)
            // dbus_message_set_destination rewrites the header even for NULL: only a unicast one is set.
            if let destination { message.destination = destination }
            connection.send(message)
            return
        }
        var body = WireEncoder()
        for argument in arguments { try body.value(argument) }
        connection.send(try WireMessage.signal(
            path: path, interface: interface, member: member, destination: destination, signature: signature, body: body
        ).checkedInDebugBuilds())
    }

    /// Emits a signal whose arguments `arguments` writes into the body,
    /// with `signature` as their signature: for a caller that has typed
    /// values, without an array of ``DBusValue``s in between and without
    /// looking up the object's table per signal (a debug build, every test,
    /// still compares `signature` with the one the table declares, and
    /// libdbus checks the body against it). No file descriptors.
    /// Loop thread.
    package func emitSignal(
        _ member: MemberName, interface: InterfaceName, path: ObjectPath, signature: Signature, destination: BusName?,
        arguments: (inout WireEncoder) throws(DBusError) -> Void
    ) throws(DBusError) {
        connection.requireLoopThread()
        #if DEBUG
            if let declared = lookup(path)?.signalSignature(interface: interface, member: member), declared != signature {
                throw .invalidArgs("signal \(interface).\(member) is declared with '\(declared)', got '\(signature)'")
            }
        #endif
        var body = WireEncoder()
        try arguments(&body)
        connection.send(try WireMessage.signal(
            path: path, interface: interface, member: member, destination: destination, signature: signature, body: body
        ).checkedInDebugBuilds())
    }

    private static let propertiesChangedSignature: Signature = "sa{sv}as"

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` with the given
    /// new values and invalidated names. Safe from any thread.
    package func emitPropertiesChanged(
        path: ObjectPath, interface: InterfaceName, changed: [String: DBusValue], invalidated: [String] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        // Written straight into wire format (``WireEncoder``): every change
        // of a session sends one.
        var body = WireEncoder()
        body.string(interface.rawValue)
        try body.array(elementAlignment: 8) { (entries) throws(DBusError) in
            for (name, value) in changed {
                entries.align(8)
                entries.string(name)
                try entries.variant(value)
            }
        }
        try body.strings(invalidated)
        connection.send(try WireMessage.signal(
            path: path, interface: .properties, member: Self.propertiesChanged, destination: destination,
            signature: Self.propertiesChangedSignature, body: body
        ).checkedInDebugBuilds())
    }

    private static let propertiesChanged: MemberName = "PropertiesChanged"

    /// Emits `PropertiesChanged` with the entries `changed` writes into its
    /// `a{sv}` (each an 8-aligned key and a variant) and nothing
    /// invalidated: for a caller that has typed values, without a dictionary
    /// of ``DBusValue``s in between.
    package func emitPropertiesChanged(
        path: ObjectPath, interface: InterfaceName, destination: BusName?,
        changed: (inout WireEncoder) throws(DBusError) -> Void
    ) throws(DBusError) {
        var body = WireEncoder()
        body.string(interface.rawValue)
        try body.array(elementAlignment: 8, changed)
        try body.strings([])
        connection.send(try WireMessage.signal(
            path: path, interface: .properties, member: Self.propertiesChanged, destination: destination,
            signature: Self.propertiesChangedSignature, body: body
        ).checkedInDebugBuilds())
    }

    /// Emits `PropertiesChanged` for `names`, reading the current values from
    /// the object's getters: a property that emits `.yes` is sent with its
    /// value, `.invalidates` by name only, `.const` and `.no` not at all.
    /// Emits nothing when no property qualifies.
    package func emitPropertiesChanged(
        path: ObjectPath, interface: InterfaceName, properties names: [MemberName], destination: BusName? = nil
    ) throws(DBusError) {
        connection.requireLoopThread()
        guard let registration = lookup(path) else { throw .unknownObject("No object at path \(path)") }
        let (changed, invalidated) = try registration.changes(at: path, interface: interface, names: names)
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        try emitPropertiesChanged(
            path: path, interface: interface, changed: changed, invalidated: invalidated, destination: destination)
    }

    /// The introspection XML `path` would answer with (nil for an unknown
    /// path), without the child nodes a tree lists per caller.
    package func introspect(_ path: ObjectPath) -> String? {
        let children = childNames(of: path)
        if let interfaces = lookup(path)?.interfaceXML(at: path) {
            return Introspection.document(interfaces: interfaces, children: children)
        }
        return children.isEmpty && !isTreeRoot(path)
            ? nil : Introspection.document(interfaces: Introspection.nodeInterfaces, children: children)
    }
}

/// What the server needs from a registration, whatever its target type.
protocol AnyRegistration: AnyObject {
    var path: ObjectPath { get }
    func serves(_ path: ObjectPath) -> Bool
    /// Handles the call when this registration has an object at `path`;
    /// false (nothing sent) when it does not.
    func dispatch(_ message: Message, path: ObjectPath, interface: InterfaceName?, member: MemberName, server: ObjectServer)
        -> Bool
    func listChildren(of path: ObjectPath, caller: BusName?, _ done: @escaping @Sendable ([String]) -> Void)
    /// The interfaces' XML of the object at `path`, nil when there is none.
    func interfaceXML(at path: ObjectPath) -> [String]?
    func signalSignature(interface: InterfaceName, member: MemberName) -> Signature?
    func changes(at path: ObjectPath, interface: InterfaceName, names: [MemberName]) throws(DBusError)
        -> (changed: [String: DBusValue], invalidated: [String])
}

/// References of one class kept as `AnyObject`s and read back with
/// `unsafeDowncast`, for the lookups of every call in ``Registration``.
///
/// A registration's code is generic over its target and, the target being
/// another module's type, runs unspecialized: there, reading an element of
/// an `Array<CompiledTable<Target>>` calls the array's generic subscript,
/// which first looks up the element type's metadata (about 330
/// instructions, twice per call). An `[AnyObject]` is read without it, and
/// the downcast is a reinterpretation: every element was stored as an
/// `Element`.
struct References<Element: AnyObject> {
    private let objects: [AnyObject]

    init(_ elements: [Element]) {
        objects = elements
    }

    var count: Int { objects.count }

    subscript(index: Int) -> Element {
        unsafeDowncast(objects[index], to: Element.self)
    }

    /// Every element, as an array: for the paths that are not per call.
    var all: [Element] { objects.map { unsafeDowncast($0, to: Element.self) } }
}

/// Immutable, and holding only `Element`s: as sendable as they are.
extension References: @unchecked Sendable where Element: Sendable {}

/// A table prepared for dispatch: members by name, signatures precomputed,
/// introspection XML rendered once. Classes, so that routing a call passes
/// references instead of copying the tables (each holds dictionaries and
/// closures).
final class CompiledTable<Target: Sendable>: Sendable {
    final class CompiledMethod: Sendable {
        let method: InterfaceTable<Target>.Method
        let inputSignature: Signature
        let outputSignature: Signature

        init(method: InterfaceTable<Target>.Method, inputSignature: Signature, outputSignature: Signature) {
            self.method = method
            self.inputSignature = inputSignature
            self.outputSignature = outputSignature
        }
    }

    let table: InterfaceTable<Target>
    let methods: [String: CompiledMethod]
    /// The methods in order, for ``method(_:)`` (``References``: read
    /// without `CompiledMethod`'s metadata).
    private let methodList: References<CompiledMethod>
    /// Their names, at the same index: searched one by one.
    private let methodNames: [MemberName]
    /// What `Get`, `GetAll` and `Set` use of a property, in a class of
    /// fixed layout: ``References`` holds it, and the unspecialized generic
    /// code reads its fields in place. Passing the table's
    /// `InterfaceTable<Target>.Property` (a generic struct) around instead
    /// looked up that struct's metadata twice per `Get` (660 instructions).
    final class CompiledProperty: Sendable {
        let name: MemberName
        let signature: Signature
        let access: PropertyAccess
        let emitsChange: EmitsChangedSignal
        let getter: (@Sendable (Target) throws -> DBusValue)?
        let setter: (@Sendable (Target, DBusValue, MethodInvocation) throws -> Void)?

        init(_ property: InterfaceTable<Target>.Property) {
            name = property.name
            signature = property.signature
            access = property.access
            emitsChange = property.emitsChange
            getter = property.getter
            setter = property.setter
        }
    }

    /// The properties' names, at their index in ``table``'s properties:
    /// searched one by one (``property(_:)``).
    private let propertyNames: [String]
    /// The properties, at the same index.
    let properties: References<CompiledProperty>
    let signals: [String: Signature]
    let xml: String

    /// The method `name`. Member names are mostly short enough for Swift
    /// to hold inline, where comparing is cheaper than hashing: a table of a
    /// few dozen methods is searched one by one.
    func method(_ name: MemberName) -> CompiledMethod? {
        guard methodNames.count <= 32 else { return methods[name.rawValue] }
        guard let index = methodNames.firstIndex(of: name) else { return nil }
        return methodList[index]
    }

    /// The property `name`. Compared one by one in an array of strings: an
    /// interface has a few dozen properties at most, and hashing the name
    /// cost more (docs/performance.md, H5).
    func property(_ name: String) -> CompiledProperty? {
        guard let index = propertyNames.firstIndex(of: name) else { return nil }
        return properties[index]
    }

    init(_ table: InterfaceTable<Target>) throws(DBusError) {
        self.table = table
        var methods: [String: CompiledMethod] = [:]
        for method in table.methods {
            let input = try Signature(method.inputSignature.rawValue)
            let output = try Signature(method.outputSignature.rawValue)
            guard methods[method.name.rawValue] == nil else { throw .failed("\(table.name) declares \(method.name) twice") }
            methods[method.name.rawValue] = CompiledMethod(method: method, inputSignature: input, outputSignature: output)
        }
        let methodList = table.methods.compactMap { methods[$0.name.rawValue] }
        self.methodList = References(methodList)
        methodNames = methodList.map(\.method.name)
        var propertyNames: [String] = []
        for property in table.properties {
            guard property.signature.isSingleCompleteType else {
                throw .invalidArgs("property \(table.name).\(property.name) has type '\(property.signature)', not one complete type")
            }
            guard !propertyNames.contains(property.name.rawValue) else {
                throw .failed("\(table.name) declares property \(property.name) twice")
            }
            propertyNames.append(property.name.rawValue)
        }
        var signals: [String: Signature] = [:]
        for signal in table.signals {
            signals[signal.name.rawValue] = try Signature(signal.signature.rawValue)
        }
        self.methods = methods
        self.propertyNames = propertyNames
        properties = References(table.properties.map(CompiledProperty.init))

        self.signals = signals
        xml = Introspection.interface(table)
    }
}

/// Immutable after init; used on the loop thread.
final class Registration<Target: Sendable>: AnyRegistration, Sendable {
    let path: ObjectPath
    let isTree: Bool
    /// The interfaces' tables (``References``: read without
    /// `CompiledTable<Target>`'s metadata).
    let tables: References<CompiledTable<Target>>
    /// The interfaces' names, at their index in ``tables``: searched one by
    /// one.
    let tableNames: [String]
    let authorize: Authorizer<Target>?
    let children: ChildLister?
    let resolve: @Sendable (ObjectPath) -> Target?
    let logger: Logger

    init(
        path: ObjectPath, isTree: Bool, tables: [InterfaceTable<Target>], authorize: Authorizer<Target>?,
        children: ChildLister?, logger: Logger,
        resolve: @escaping @Sendable (ObjectPath) -> Target?
    ) throws(DBusError) {
        self.path = path
        self.logger = logger
        self.isTree = isTree
        var compiled: [CompiledTable<Target>] = []
        var names: [String] = []
        for table in tables {
            guard ![InterfaceName.introspectable, .properties, .peer].contains(table.name) else {
                throw .failed("\(table.name) is implemented by the object server itself")
            }
            guard !names.contains(table.name.rawValue) else { throw .failed("interface \(table.name) given twice for \(path)") }
            names.append(table.name.rawValue)
            compiled.append(try CompiledTable(table))
        }
        self.tables = References(compiled)
        self.tableNames = names
        self.authorize = authorize
        self.children = children
        self.resolve = resolve
    }

    func serves(_ path: ObjectPath) -> Bool {
        isTree ? self.path.isAncestor(of: path) && resolve(path) != nil : path == self.path
    }

    /// The object at `path`: for a tree, only below its prefix.
    private func object(at path: ObjectPath) -> Target? {
        isTree && !self.path.isAncestor(of: path) ? nil : resolve(path)
    }

    func listChildren(of path: ObjectPath, caller: BusName?, _ done: @escaping @Sendable ([String]) -> Void) {
        guard let children else { return done([]) }
        children(path, caller, done)
    }

    /// The table of interface `name`: compared one by one, since an object
    /// has a few interfaces and hashing the name costs more than that.
    private func table(_ name: InterfaceName) -> CompiledTable<Target>? {
        guard let index = tableNames.firstIndex(of: name.rawValue) else { return nil }
        return tables[index]
    }

    /// The caller checked that `path` is this registration's or below its
    /// prefix (the resolver does not check it again).
    func dispatch(_ message: Message, path: ObjectPath, interface: InterfaceName?, member: MemberName, server: ObjectServer)
        -> Bool
    {
        guard let target = resolve(path) else { return false }
        route(message, target: target, path: path, interface: interface, member: member, server: server)
        return true
    }

    private func route(
        _ message: Message, target: Target, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        server: ObjectServer
    ) {
        let connection = server.connection
        // The object's own interfaces.
        if let interface, let table = table(interface) {
            guard let method = table.method(member) else {
                connection.replyIfWanted(to: message, error: .unknownMethod(
                    "No method \(member) with signature '\(message.signature)' on interface \(interface)"))
                return
            }
            run(method, of: table, target: target, message: message, path: path, connection: connection)
            return
        }
        if interface == nil {
            for index in 0..<tables.count {
                let table = tables[index]
                if let method = table.method(member) {
                    run(method, of: table, target: target, message: message, path: path, connection: connection)
                    return
                }
            }
        }
        // The standard interfaces.
        if interface == nil || interface == .introspectable, member == "Introspect" {
            server.answerIntrospect(message, path: path, interfaces: Introspection.objectInterfaces + tables.all.map(\.xml))
            return
        }
        if interface == nil || interface == .properties, let signatures = PropertiesMember.signatures[member.rawValue] {
            handleProperties(
                member, signatures: signatures, target: target, message: message, path: path, connection: connection)
            return
        }
        if server.answerPeer(message, interface: interface, member: member) { return }
        if let interface, interface != .introspectable, interface != .properties, interface != .peer {
            connection.replyIfWanted(to: message, error: .unknownInterface("No interface \(interface) at path \(path)"))
        } else {
            let on = interface.map { " on interface \($0)" } ?? ""
            connection.replyIfWanted(to: message, error: .unknownMethod("No method \(member) with signature '\(message.signature)'\(on)"))
        }
    }

    /// validate → authorize → act: the signature check, then the authorizer,
    /// then the handler.
    private func run(
        _ method: CompiledTable<Target>.CompiledMethod, of table: CompiledTable<Target>, target: Target,
        message: Message, path: ObjectPath, connection: Connection
    ) {
        guard message.hasSignature(method.inputSignature) else {
            connection.replyIfWanted(to: message, error: .invalidArgs(
                "\(table.table.name).\(method.method.name) expects arguments '\(method.inputSignature)', got '\(message.signature)'"))
            return
        }
        let invocation = MethodInvocation(
            message: message, path: path, interface: table.table.name, member: method.method.name,
            replySignature: method.outputSignature, core: connection.core)
        let handler = method.method.handler
        // The handler as a closure only for a verdict that comes later.
        if admitsNow(target, invocation, connection: connection, later: { { Self.perform(handler, target, invocation) } }) {
            Self.perform(handler, target, invocation)
        }
    }

    private static func perform(
        _ handler: @Sendable (Target, MethodInvocation) throws -> Void, _ target: Target, _ invocation: MethodInvocation
    ) {
        do {
            try handler(target, invocation)
        } catch {
            invocation.fail(error)
        }
    }

    /// Asks the authorizer about `invocation`: true when the call may run now
    /// (there is none, or it allowed the call at once). A refusal is answered
    /// here; for a verdict that comes later, `later` makes the closure that
    /// runs the call on the loop thread once allowed.
    private func admitsNow(
        _ target: Target, _ invocation: MethodInvocation, connection: Connection,
        later: () -> @Sendable () -> Void
    ) -> Bool {
        guard let authorize else { return true }
        switch authorize(target, invocation) {
        case .allow:
            return true
        case .refuse(let refusal):
            invocation.fail(refusal)
            return false
        case .later(let start):
            let body = later()
            let decided = Atomic<Bool>(false)
            let loop = connection.loop
            start { refusal in
                guard !decided.exchange(true, ordering: .acquiringAndReleasing) else { return }
                let proceed: @Sendable () -> Void = {
                    if let refusal { invocation.fail(refusal) } else { body() }
                }
                if let loop, !loop.inEventLoop { loop.execute(proceed) } else { proceed() }
            }
            return false
        }
    }

    // MARK: Properties

    private func handleProperties(
        _ member: MemberName, signatures: (input: Signature, output: Signature), target: Target, message: Message,
        path: ObjectPath, connection: Connection
    ) {
        let (expected, output) = signatures
        guard message.hasSignature(expected) else {
            connection.replyIfWanted(to: message, error: .invalidArgs(
                "org.freedesktop.DBus.Properties.\(member) expects arguments '\(expected)', got '\(message.signature)'"))
            return
        }
        let invocation = MethodInvocation(
            message: message, path: path, interface: .properties, member: member, replySignature: output,
            core: connection.core)
        if admitsNow(target, invocation, connection: connection, later: { { [self] in
            answerProperties(member, target: target, invocation: invocation, path: path, connection: connection)
        } }) {
            answerProperties(member, target: target, invocation: invocation, path: path, connection: connection)
        }
    }

    /// `Get`, `GetAll` or `Set`, once authorized.
    private func answerProperties(
        _ member: MemberName, target: Target, invocation: MethodInvocation, path: ObjectPath, connection: Connection
    ) {
        do throws(DBusError) {
            var args = invocation.arguments()
            let interfaceName = try args.next(String.self)
            switch member.rawValue {
            case "Get":
                let name = try args.next(String.self)
                let value = try read(property(interfaceName, name, path), of: target)
                invocation.reply(.variant(value))
            case "GetAll":
                invocation.reply(.vardict(try readAll(interfaceName, of: target, path: path)))
            default:
                let name = try args.next(String.self)
                let value = try args.next(DBusValue.self)
                try write(property(interfaceName, name, path), interface: interfaceName, value: value,
                          of: target, invocation: invocation, path: path, connection: connection)
            }
        } catch {
            invocation.fail(error)
        }
    }

    private func property(_ interface: String, _ name: String, _ path: ObjectPath) throws(DBusError)
        -> CompiledTable<Target>.CompiledProperty
    {
        guard let index = tableNames.firstIndex(of: interface) else {
            throw .unknownInterface("No interface \(interface) with properties at path \(path)")
        }
        guard let property = tables[index].property(name) else {
            throw .unknownProperty("No property \(name) on interface \(interface)")
        }
        return property
    }

    private func read(_ property: CompiledTable<Target>.CompiledProperty, of target: Target) throws(DBusError) -> DBusValue {
        guard property.access != .write, let getter = property.getter else {
            throw .accessDenied("Property \(property.name) is write-only")
        }
        let value: DBusValue
        do {
            value = try getter(target)
        } catch let error as any DBusErrorConvertible {
            throw error.dbusError
        } catch {
            logger.log(.error, "reading property \(property.name) failed: \(String(describing: error))")
            throw .failed("Reading property \(property.name) failed.")
        }
        guard value.hasType(property.signature) else {
            logger.log(.error, "property \(property.name) getter returned '\(value.signature)', declared '\(property.signature)'")
            throw .failed("Property \(property.name) has an invalid value.")
        }
        return value
    }

    private func readAll(_ interface: String, of target: Target, path: ObjectPath) throws(DBusError) -> [String: DBusValue] {
        let selected: [CompiledTable<Target>]
        if interface.isEmpty {
            selected = tables.all
        } else {
            guard let index = tableNames.firstIndex(of: interface) else {
                throw .unknownInterface("No interface \(interface) with properties at path \(path)")
            }
            selected = [tables[index]]
        }
        var values: [String: DBusValue] = [:]
        for table in selected {
            for index in 0..<table.properties.count {
                let property = table.properties[index]
                guard property.access != .write, property.getter != nil else { continue }
                values[property.name.rawValue] = try read(property, of: target)
            }
        }
        return values
    }

    private func write(
        _ property: CompiledTable<Target>.CompiledProperty, interface: String, value: DBusValue, of target: Target,
        invocation: MethodInvocation, path: ObjectPath, connection: Connection
    ) throws(DBusError) {
        guard property.access != .read, let setter = property.setter else {
            throw .propertyReadOnly("Property \(property.name) is read-only")
        }
        guard value.hasType(property.signature) else {
            throw .invalidArgs("Property \(property.name) has type '\(property.signature)', got '\(value.signature)'")
        }
        do {
            try setter(target, value, invocation)
        } catch let error as any DBusErrorConvertible {
            throw error.dbusError
        } catch {
            logger.log(.error, "setting property \(property.name) on \(path) failed: \(String(describing: error))")
            throw .failed("Setting property \(property.name) failed.")
        }
        invocation.reply()
        switch property.emitsChange {
        case .yes:
            let current = (try? read(property, of: target)) ?? value
            let signal = Message.signal(path: path, interface: .properties, member: "PropertiesChanged")
            try signal.append(.string(interface), .vardict([property.name.rawValue: current]), .strings([]))
            connection.send(signal)
        case .invalidates:
            let signal = Message.signal(path: path, interface: .properties, member: "PropertiesChanged")
            try signal.append(.string(interface), .vardict([:]), .strings([property.name.rawValue]))
            connection.send(signal)
        case .const, .no:
            break
        }
    }

    // MARK: introspection and emission helpers

    func interfaceXML(at path: ObjectPath) -> [String]? {
        guard object(at: path) != nil else { return nil }
        return Introspection.objectInterfaces + tables.all.map(\.xml)
    }

    func signalSignature(interface: InterfaceName, member: MemberName) -> Signature? {
        table(interface)?.signals[member.rawValue]
    }

    func changes(at path: ObjectPath, interface: InterfaceName, names: [MemberName]) throws(DBusError)
        -> (changed: [String: DBusValue], invalidated: [String])
    {
        guard let target = object(at: path) else { throw .unknownObject("No object at path \(path)") }
        guard let table = table(interface) else { throw .unknownInterface("No interface \(interface) at path \(path)") }
        var changed: [String: DBusValue] = [:]
        var invalidated: [String] = []
        for name in names {
            guard let property = table.property(name.rawValue) else {
                throw .unknownProperty("No property \(name) on interface \(interface)")
            }
            switch property.emitsChange {
            case .yes: changed[name.rawValue] = try read(property, of: target)
            case .invalidates: invalidated.append(name.rawValue)
            case .const, .no: break
            }
        }
        return (changed, invalidated)
    }
}

/// The members of `org.freedesktop.DBus.Properties` the server implements,
/// with their argument and reply signatures: made once (a literal of a
/// validated type is checked by libdbus each time it is made).
enum PropertiesMember {
    static let signatures: [String: (input: Signature, output: Signature)] = [
        "Get": ("ss", "v"), "GetAll": ("s", "a{sv}"), "Set": ("ssv", ""),
    ]
}
