import FlowKit

/// Which plugin a capability belongs to.
public struct PluginIdentity: Sendable, Hashable {
    /// The plugin's registered name.
    public var name: String
    /// The file it was loaded from.
    public var path: String

    /// Names a plugin and its file.
    public init(name: String, path: String) {
        self.name = name
        self.path = path
    }
}

/// One capability of a loaded plugin, ready to call through ``PluginCaller``.
public struct RegisteredCapability: Sendable {
    /// Its kind and name.
    public var id: CapabilityID
    /// The plugin that registered it.
    public var plugin: PluginIdentity
    /// The object the plugin registered.
    public var capability: Capability

    /// A capability from its parts (the loader makes these; tests may too).
    public init(id: CapabilityID, plugin: PluginIdentity, capability: Capability) {
        self.id = id
        self.plugin = plugin
        self.capability = capability
    }
}

/// The loaded plugins: capability lookup for calls, the catalog for the engine's
/// lint, and the records for `ListPlugins`.
///
/// Immutable once the loader has built it. Plugins are never unloaded (Swift
/// code must not be `dlclose`d), so a registry can be shared freely.
public struct PluginRegistry: Sendable {
    /// Every plugin file looked at, loaded or not, in load order.
    public let records: [PluginRecord]
    private let byName: [String: RegisteredCapability]

    /// An empty registry: no plugins.
    public init() {
        self.init(records: [], capabilities: [])
    }

    /// A registry over `capabilities`, which must have unique names (the loader
    /// guarantees it; tests can build one by hand).
    public init(records: [PluginRecord], capabilities: [RegisteredCapability]) {
        self.records = records
        var map: [String: RegisteredCapability] = [:]
        for c in capabilities where map[c.id.name] == nil {
            map[c.id.name] = c
        }
        self.byName = map
    }

    /// The capability named `name` when it has the kind `kind`.
    public func capability(_ kind: CapabilityKind, named name: String) -> RegisteredCapability? {
        guard let c = byName[name], c.id.kind == kind else { return nil }
        return c
    }

    /// Every (kind, name) that loaded plugins provide: what a flow may name.
    public var catalog: Set<CapabilityID> {
        Set(byName.values.map(\.id))
    }

    /// The capabilities in name order.
    public var capabilities: [RegisteredCapability] {
        byName.values.sorted { $0.id.name < $1.id.name }
    }

    /// The records of plugins that are not loaded.
    public var problems: [PluginRecord] {
        records.filter { $0.status != .loaded }
    }
}
