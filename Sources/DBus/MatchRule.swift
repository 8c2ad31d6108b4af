/// A bus match rule (`type='signal',interface='…',member='…'`), for `AddMatch`
/// and for filtering received signals locally.
package struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// The message type, usually `.signal`.
    package var type: MessageType?
    /// The sender: a unique name, or a well-known name the bus resolves.
    package var sender: BusName?
    /// The interface.
    package var interface: InterfaceName?
    /// The member (signal or method name).
    package var member: MemberName?
    /// The exact object path.
    package var path: ObjectPath?
    /// Matches `path` and every path below it.
    package var pathNamespace: ObjectPath?
    /// The destination (for unicast signals and calls).
    package var destination: BusName?
    /// String arguments that must match exactly, by index (`arg0='…'`).
    package var arguments: [Int: String]

    /// A rule; every field left nil matches anything.
    package init(
        type: MessageType? = .signal, sender: BusName? = nil, interface: InterfaceName? = nil, member: MemberName? = nil,
        path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, destination: BusName? = nil, arguments: [Int: String] = [:]
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
    }

    /// The bus driver's `NameOwnerChanged` signal, optionally for one name (`arg0`).
    package static func nameOwnerChanged(for name: BusName? = nil) -> MatchRule {
        MatchRule(
            sender: .bus, interface: .bus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
            arguments: name.map { [0: $0.rawValue] } ?? [:])
    }

    /// The rule in the bus's text form. Values are single-quoted; a quote
    /// inside a value is written `'\''`, as the specification asks.
    package var description: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append(key + "='" + value.replacingQuotes() + "'")
        }
        switch type {
        case .methodCall?: add("type", "method_call")
        case .methodReturn?: add("type", "method_return")
        case .error?: add("type", "error")
        case .signal?: add("type", "signal")
        case nil: break
        }
        add("sender", sender?.rawValue)
        add("interface", interface?.rawValue)
        add("member", member?.rawValue)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination?.rawValue)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        return parts.joined(separator: ",")
    }

    /// True when `message` satisfies the rule. A well-known `sender` other
    /// than the bus driver cannot be checked locally (messages carry unique
    /// names) and is left to the bus.
    package func matches(_ message: Message) -> Bool {
        if let type, message.type != type { return false }
        if let sender, sender.isUnique || sender == .bus, message.sender != sender { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path,
                  messagePath == pathNamespace || pathNamespace.isAncestor(of: messagePath) else { return false }
        }
        if let destination, message.destination != destination { return false }
        if !arguments.isEmpty {
            var reader = message.arguments()
            var index = 0
            let last = arguments.keys.max() ?? 0
            while index <= last {
                if let wanted = arguments[index] {
                    guard let value = try? reader.next(String.self), value == wanted else { return false }
                } else {
                    reader.skip()
                }
                index += 1
            }
        }
        return true
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        guard contains("'") else { return self }
        return split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
    }
}
