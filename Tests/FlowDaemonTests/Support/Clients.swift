import TestSupport
import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing

/// The object path of session `id` (ids in tests come from flowd).
func sessionPath(_ id: String) -> ObjectPath {
    guard let path = FlowBus.sessionPath(of: id) else { preconditionFailure("\"\(id)\" is not a session id") }
    return path
}

/// A plain client-mode connection to flowd's objects, for what a
/// well-behaved client never sends: wrong signatures, unknown members,
/// objects and properties, calls left in flight.
struct RawFlowd: Sendable {
    let connection: Connection

    init(address: String) throws {
        connection = try Connection(.address(address))
    }

    /// The Manager object.
    var manager: Proxy {
        Proxy(connection: connection, destination: FlowBus.name, path: FlowBus.managerPath, interface: FlowBus.managerInterface)
    }

    /// The session object at `path`.
    func session(_ path: ObjectPath) -> Proxy {
        Proxy(connection: connection, destination: FlowBus.name, path: path, interface: FlowBus.sessionInterface)
    }

    /// The object of session `id`.
    func session(id: String) -> Proxy { session(sessionPath(id)) }
}

/// A client's events as a test reads them: waits for one that matches and
/// keeps the ones it passes over for later waits, in the order flowd sent
/// them. Used by one test task at a time.
final class EventWatcher: @unchecked Sendable {
    let client: FlowClient
    let events: FlowEvents
    private var inbox: [FlowEvent] = []

    /// Subscribes to all of flowd's events (or `session`'s) on `client`.
    init(_ client: FlowClient, session: String? = nil) async throws {
        self.client = client
        events = try await client.events(for: session)
    }

    deinit {
        events.cancel()
    }

    /// The first event satisfying `predicate`, waiting at most `timeout` (an
    /// upper bound for a broken test, not a measurement).
    func next(timeout: Duration = .seconds(20), where predicate: (FlowEvent) -> Bool) async -> FlowEvent? {
        if let index = inbox.firstIndex(where: predicate) { return inbox.remove(at: index) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero, let event = await events.next(timeout: remaining) else { return nil }
            if predicate(event) { return event }
            inbox.append(event)
        }
    }

    /// The next signal of `session` satisfying `predicate`.
    func nextSignal(
        of session: String, timeout: Duration = .seconds(20), where predicate: (SessionSignal) -> Bool = { _ in true }
    ) async -> SessionSignal? {
        let event = await next(timeout: timeout) { event in
            guard case .session(let id, let signal) = event, id == session else { return false }
            return predicate(signal)
        }
        guard case .session(_, let signal)? = event else { return nil }
        return signal
    }

    /// The next Manager signal satisfying `predicate`.
    func nextManagerSignal(
        timeout: Duration = .seconds(20), where predicate: (ManagerSignal) -> Bool = { _ in true }
    ) async -> ManagerSignal? {
        let event = await next(timeout: timeout) { event in
            guard case .manager(let signal) = event else { return false }
            return predicate(signal)
        }
        guard case .manager(let signal)? = event else { return nil }
        return signal
    }

    /// The value of the first `PropertiesChanged` of `session` that changed
    /// `property` to a value satisfying `predicate`.
    func nextPropertyChange(
        _ property: SessionProperty, of session: String, timeout: Duration = .seconds(20),
        where predicate: (DBusValue) -> Bool = { _ in true }
    ) async -> DBusValue? {
        let event = await next(timeout: timeout) { event in
            guard case .propertiesChanged(let id, let changed) = event, id == session, let value = changed[property] else {
                return false
            }
            return predicate(value)
        }
        guard case .propertiesChanged(_, let changed)? = event else { return nil }
        return changed[property]
    }

    /// Every event so far, in order, emptying the inbox; with `until`, goes
    /// on collecting (up to `timeout`) until it holds for what was
    /// collected. A Ping first: flowd sends a call's signals before it
    /// answers a later call, so they have all arrived.
    func drain(timeout: Duration = .seconds(10), until complete: ([FlowEvent]) -> Bool = { _ in true }) async throws
        -> [FlowEvent]
    {
        try await client.ping()
        var collected = inbox + events.drain()
        inbox = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while !complete(collected) {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero, let event = await events.next(timeout: remaining) else { break }
            collected.append(event)
        }
        return collected
    }
}

extension FlowClient {
    /// The ids `ListFlows` returns, sorted.
    func flowIDs() async throws -> [String] {
        try await listFlows().map(\.id).sorted()
    }

    /// `StartSession` of `flow` in flowd's default locale, without prefill.
    func start(_ flow: String) async throws -> String {
        try await startSession(flow: flow, locale: nil, prefill: [:])
    }
}

extension RawFlowd {
    /// Subscribes to every signal flowd sends (on the bus).
    func watchFlowd() throws {
        try connection.addMatch(MatchRule(sender: FlowBus.name, pathNamespace: FlowBus.managerPath))
    }

    /// Every signal received so far, in arrival order; with `until`, goes on
    /// collecting (up to `timeout`) until it holds for what was collected. A
    /// Ping first: flowd sends a call's signals before it answers a later
    /// call, so they are all on their way.
    func drainSignals(timeout: Duration = .seconds(10), until complete: ([Message]) -> Bool = { _ in true }) throws
        -> [Message]
    {
        try manager.ping()
        var messages: [Message] = []
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
}
