/// The watches of a loop, grouped by descriptor. Shared by both loops; the
/// real loop mirrors ``interest(of:)`` into epoll.
package struct WatchTable {
    package struct Watch {
        package let fd: Int32
        package var events: IOEvents
        package var enabled: Bool
        package let handler: @Sendable (IOEvents) -> Void

        package init(fd: Int32, events: IOEvents, enabled: Bool, handler: @escaping @Sendable (IOEvents) -> Void) {
            self.fd = fd
            self.events = events
            self.enabled = enabled
            self.handler = handler
        }
    }

    package private(set) var watches: [UInt64: Watch] = [:]
    package private(set) var byFD: [Int32: [UInt64]] = [:]

    package init() {}

    package mutating func add(_ id: UInt64, _ watch: Watch) {
        watches[id] = watch
        byFD[watch.fd, default: []].append(id)
    }

    @discardableResult
    package mutating func remove(_ id: UInt64) -> Watch? {
        guard let watch = watches.removeValue(forKey: id) else { return nil }
        var ids = byFD[watch.fd] ?? []
        ids.removeAll { $0 == id }
        byFD[watch.fd] = ids.isEmpty ? nil : ids
        return watch
    }

    package mutating func update(_ id: UInt64, events: IOEvents?, enabled: Bool?) -> Int32? {
        guard var watch = watches[id] else { return nil }
        if let events { watch.events = events.intersection([.read, .write]) }
        if let enabled { watch.enabled = enabled }
        watches[id] = watch
        return watch.fd
    }

    /// The union of what the enabled watches of `fd` ask for.
    package func interest(of fd: Int32) -> IOEvents {
        var events: IOEvents = []
        for id in byFD[fd] ?? [] {
            if let watch = watches[id], watch.enabled { events.formUnion(watch.events) }
        }
        return events
    }

    /// The handlers to call for `reported` readiness on `fd`, with the events
    /// each one should see. Hang-up and error go to every enabled watch.
    package func handlers(for fd: Int32, reported: IOEvents) -> [(UInt64, IOEvents)] {
        var result: [(UInt64, IOEvents)] = []
        for id in byFD[fd] ?? [] {
            guard let watch = watches[id], watch.enabled else { continue }
            let seen = reported.intersection(watch.events.union([.hangUp, .error]))
            if !seen.isEmpty { result.append((id, seen)) }
        }
        return result
    }
}
