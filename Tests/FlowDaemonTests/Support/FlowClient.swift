import DBus
import Foundation

/// A client-mode connection to flowd with small typed helpers over the
/// Manager and Session interfaces (what a real client such as flowctl does).
struct FlowClient: Sendable {
    static let busName: BusName = "org.flowd.Flow1"
    static let managerPath: ObjectPath = "/org/flowd/Flow1"
    static let managerInterface: InterfaceName = "org.flowd.Flow1.Manager"
    static let sessionInterface: InterfaceName = "org.flowd.Flow1.Session"

    let connection: Connection
    let manager: Proxy
    /// Signals received while waiting for others.
    let inbox = SignalInbox()

    init(address: String) throws(DBusError) {
        connection = try Connection(.address(address))
        manager = Proxy(
            connection: connection, destination: Self.busName, path: Self.managerPath, interface: Self.managerInterface,
            timeout: .seconds(30))
    }

    /// The session object at `path`.
    func session(_ path: ObjectPath) -> SessionClient {
        SessionClient(
            proxy: Proxy(
                connection: connection, destination: Self.busName, path: path, interface: Self.sessionInterface,
                timeout: .seconds(30)))
    }

    /// `StartSession`.
    func start(_ flow: String, options: [String: DBusValue] = [:]) throws(DBusError) -> SessionClient {
        var reply = try manager.call("StartSession", typed: flow, options).arguments()
        return session(try reply.next(ObjectPath.self))
    }

    /// `ListFlows`.
    func listFlows() throws(DBusError) -> [[String: DBusValue]] {
        try manager.call("ListFlows", returning: [[String: DBusValue]].self)
    }

    /// The ids `ListFlows` returns, sorted.
    func flowIDs() throws(DBusError) -> [String] {
        try listFlows().compactMap { $0["id"]?.string }.sorted()
    }

    /// One entry of `ListSessions`.
    struct Listing: Equatable, Sendable {
        var id: String
        var flow: String
        var path: ObjectPath
        var state: String
    }

    /// `ListSessions`.
    func listSessions() throws(DBusError) -> [Listing] {
        var reply = try manager.call("ListSessions").arguments()
        let value = try reply.nextValue()
        return (value.elements ?? []).compactMap { entry in
            guard let f = entry.fields, f.count == 4, let id = f[0].string, let flow = f[1].string,
                  let path = f[2].objectPath, let state = f[3].string else { return nil }
            return Listing(id: id, flow: flow, path: path, state: state)
        }
    }

    /// `GetSession`.
    func getSession(_ id: String) throws(DBusError) -> ObjectPath {
        try manager.call("GetSession", .string(id), returning: ObjectPath.self)
    }

    /// `Reload`.
    func reload() throws(DBusError) {
        try manager.call("Reload")
    }

    /// `Peer.Ping` to the Manager object.
    func ping() throws(DBusError) {
        try manager.ping()
    }

    /// Subscribes to every signal flowd sends (on the bus), for
    /// ``nextSignal(_:path:timeout:where:)``.
    func watchFlowd() throws(DBusError) {
        try connection.addMatch(MatchRule(sender: Self.busName, pathNamespace: Self.managerPath))
    }

    /// Waits for a signal from flowd named `member` (on `path` when given)
    /// that satisfies `predicate`. Signals it passes over stay in the inbox
    /// for later waits.
    func nextSignal(
        _ member: MemberName, path: ObjectPath? = nil, timeout: Duration = .seconds(20),
        where predicate: @escaping @Sendable (Message) -> Bool = { _ in true }
    ) throws(DBusError) -> Message? {
        let wanted: (Message) -> Bool = { message in
            message.member == member && (path == nil || message.path == path) && predicate(message)
        }
        if let found = inbox.take(where: wanted) { return found }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero, let message = try connection.nextSignal(timeout: remaining) else { return nil }
            if wanted(message) { return message }
            inbox.put(message)
        }
    }

    /// Every signal from flowd received so far, in arrival order, emptying
    /// the inbox; with `until`, goes on collecting (up to `timeout`) until it
    /// holds for what was collected. A Ping first: flowd sends a call's
    /// signals before it answers a later call, and the bus keeps one sender's
    /// order, so they are all on their way.
    func drainSignals(
        timeout: Duration = .seconds(10), until complete: ([Message]) -> Bool = { _ in true }
    ) throws(DBusError) -> [Message] {
        try ping()
        var messages: [Message] = []
        while let message = inbox.take(where: { _ in true }) { messages.append(message) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if let message = try connection.nextSignal(timeout: .milliseconds(20)) {
                messages.append(message)
            } else if complete(messages) {
                break
            }
        }
        return messages
    }

    /// The `PropertiesChanged` of `path`'s `interface` that changed `name`
    /// to a value satisfying `predicate`; returns that value.
    func nextPropertyChange(
        _ name: String, path: ObjectPath, interface: InterfaceName = FlowClient.sessionInterface,
        timeout: Duration = .seconds(20), where predicate: @escaping @Sendable (DBusValue) -> Bool = { _ in true }
    ) throws(DBusError) -> DBusValue? {
        let message = try nextSignal("PropertiesChanged", path: path, timeout: timeout) { message in
            guard let (changedInterface, changed) = Self.propertiesChanged(message),
                  changedInterface == interface.rawValue, let value = changed[name] else { return false }
            return predicate(value)
        }
        return message.flatMap { Self.propertiesChanged($0)?.changed[name] }
    }

    /// The interface and changed values of a `PropertiesChanged` signal.
    static func propertiesChanged(_ message: Message) -> (interface: String, changed: [String: DBusValue])? {
        var reader = message.arguments()
        guard let interface = try? reader.next(String.self),
              let changed = try? reader.next([String: DBusValue].self) else { return nil }
        return (interface, changed)
    }

}

/// Signals a client received but no wait wanted yet, oldest first.
final class SignalInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [Message] = []

    func put(_ message: Message) {
        lock.lock()
        messages.append(message)
        lock.unlock()
    }

    /// Removes and returns the oldest message satisfying `predicate`.
    func take(where predicate: (Message) -> Bool) -> Message? {
        lock.lock()
        defer { lock.unlock() }
        guard let index = messages.firstIndex(where: predicate) else { return nil }
        return messages.remove(at: index)
    }

    /// Everything held, without removing it.
    var snapshot: [Message] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }
}

/// One session object.
struct SessionClient: Sendable {
    let proxy: Proxy

    /// The object path.
    var path: ObjectPath { proxy.path }
    /// The session id: the path's last component.
    var id: String { String(path.rawValue.split(separator: "/").last ?? "") }

    /// `GetStep`.
    func step() throws(DBusError) -> Step {
        Step(raw: try proxy.call("GetStep", returning: [String: DBusValue].self))
    }

    /// `SetAnswers`; the field errors.
    @discardableResult
    func set(_ answers: [String: DBusValue]) throws(DBusError) -> [String: String] {
        var reply = try proxy.call("SetAnswers", typed: answers).arguments()
        return try reply.next([String: String].self)
    }

    /// `Continue`; empty when it moved.
    @discardableResult
    func next() throws(DBusError) -> [String: String] {
        try proxy.call("Continue", returning: [String: String].self)
    }

    /// `Back`.
    func back() throws(DBusError) { try proxy.call("Back") }

    /// `GoTo`.
    func goTo(_ step: String) throws(DBusError) { try proxy.call("GoTo", .string(step)) }

    /// `GetReview`.
    func review() throws(DBusError) -> Review {
        var reply = try proxy.call("GetReview").arguments()
        let groups = try reply.next([[String: DBusValue]].self)
        let note = try reply.next(String.self)
        return Review(groups: groups.map(Review.Group.init), note: note)
    }

    /// `GetAnswers`.
    func answers() throws(DBusError) -> [String: DBusValue] {
        try proxy.call("GetAnswers", returning: [String: DBusValue].self)
    }

    /// `Submit`.
    func submit() throws(DBusError) { try proxy.call("Submit") }

    /// `Cancel`.
    func cancel() throws(DBusError) { try proxy.call("Cancel") }

    /// `Close`.
    func close() throws(DBusError) { try proxy.call("Close") }

    /// A property's value.
    func property(_ name: MemberName) throws(DBusError) -> DBusValue { try proxy.property(name) }

    /// A string property (empty when it is not a string).
    func string(_ name: MemberName) throws(DBusError) -> String { try proxy.property(name, as: String.self) }

    /// A `u` property.
    func uint32(_ name: MemberName) throws(DBusError) -> UInt32 { try proxy.property(name, as: UInt32.self) }

    /// A `b` property.
    func bool(_ name: MemberName) throws(DBusError) -> Bool { try proxy.property(name, as: Bool.self) }

    /// `State`.
    func state() throws(DBusError) -> String { try string("State") }

    /// `Properties.GetAll` of the Session interface.
    func allProperties() throws(DBusError) -> [String: DBusValue] { try proxy.allProperties() }

    /// `Peer.Ping` to this object.
    func ping() throws(DBusError) { try proxy.ping() }
}

/// A `GetStep` reply.
struct Step: Sendable {
    let raw: [String: DBusValue]

    var id: String { raw["id"]?.string ?? "" }
    var kind: String { raw["kind"]?.string ?? "" }
    var title: String { raw["title"]?.string ?? "" }
    var announcement: String { raw["announcement"]?.string ?? "" }
    var continueLabel: String { raw["continueLabel"]?.string ?? "" }
    var index: UInt32 { raw["index"]?.uint32 ?? 0 }
    var count: UInt32 { raw["count"]?.uint32 ?? 0 }
    var canGoBack: Bool? { raw["canGoBack"]?.bool }
    var canContinue: Bool? { raw["canContinue"]?.bool }
    var error: String { raw["error"]?.string ?? "" }
    var fields: [Field] { (raw["fields"]?.vardicts ?? []).map(Field.init) }

    /// The field `id`, if the step has it.
    func field(_ id: String) -> Field? { fields.first { $0.id == id } }

    /// One field of a step.
    struct Field: Sendable {
        let raw: [String: DBusValue]
        var id: String { raw["id"]?.string ?? "" }
        var type: String { raw["type"]?.string ?? "" }
        var label: String { raw["label"]?.string ?? "" }
        var error: String { raw["error"]?.string ?? "" }
        var isSet: Bool? { raw["isSet"]?.bool }
        var value: DBusValue? { raw["value"] }
        var other: Bool { raw["other"]?.bool ?? false }
        var optionIDs: [String] { (raw["options"]?.elements ?? []).compactMap { $0.fields?.first?.string } }
    }
}

/// A `GetReview` reply.
struct Review: Sendable {
    var groups: [Group]
    var note: String

    /// The group of `step`.
    func group(_ step: String) -> Group? { groups.first { $0.step == step } }

    /// One group: a step and its answers.
    struct Group: Sendable {
        let raw: [String: DBusValue]
        init(_ raw: [String: DBusValue]) { self.raw = raw }
        var step: String { raw["step"]?.string ?? "" }
        var title: String { raw["title"]?.string ?? "" }
        var finished: Bool? { raw["finished"]?.bool }
        var status: String { raw["status"]?.string ?? "" }
        var editLabel: String { raw["editLabel"]?.string ?? "" }
        /// (field, label, display value).
        var answers: [(field: String, label: String, display: String)] {
            (raw["answers"]?.elements ?? []).compactMap { entry in
                guard let f = entry.fields, f.count == 3, let a = f[0].string, let b = f[1].string, let c = f[2].string
                else { return nil }
                return (a, b, c)
            }
        }
        /// The display value of `field`.
        func display(_ field: String) -> String? { answers.first { $0.field == field }?.display }
    }
}
