import FlowKit

/// Which plugin a capability belongs to.
package struct PluginIdentity: Sendable, Hashable {
    /// The plugin's registered name.
    package var name: String
    /// The file it was loaded from.
    package var path: String

    /// Names a plugin and its file.
    package init(name: String, path: String) {
        self.name = name
        self.path = path
    }
}

/// One capability of a loaded plugin, ready to call through ``PluginCaller``.
package struct RegisteredCapability: Sendable {
    /// Its kind and name.
    package var id: CapabilityID
    /// The plugin that registered it.
    package var plugin: PluginIdentity
    /// The object the plugin registered.
    package var capability: Capability
    /// The options it declares (read once, at load), or nil when it declares
    /// none and its options are not checked.
    package var declaredOptions: [PluginOption]?

    /// A capability from its parts (the loader makes these; tests may too).
    package init(id: CapabilityID, plugin: PluginIdentity, capability: Capability, declaredOptions: [PluginOption]? = nil) {
        self.id = id
        self.plugin = plugin
        self.capability = capability
        self.declaredOptions = declaredOptions
    }
}

/// The loaded plugins: capability lookup for calls, the catalog for the engine's
/// lint, and the records for `ListPlugins`.
///
/// Immutable once the loader has built it. Plugins are never unloaded (Swift
/// code must not be `dlclose`d), so a registry can be shared freely.
package struct PluginRegistry: Sendable {
    /// Every plugin file looked at, loaded or not, in load order.
    package let records: [PluginRecord]
    private let byName: [String: RegisteredCapability]

    /// An empty registry: no plugins.
    package init() {
        self.init(records: [], capabilities: [])
    }

    /// A registry over `capabilities`, which must have unique names (the loader
    /// guarantees it; tests can build one by hand).
    package init(records: [PluginRecord], capabilities: [RegisteredCapability]) {
        self.records = records
        var map: [String: RegisteredCapability] = [:]
        for c in capabilities where map[c.id.name] == nil {
            map[c.id.name] = c
        }
        self.byName = map
    }

    /// The capability named `name` when it has the kind `kind`.
    package func capability(_ kind: CapabilityKind, named name: String) -> RegisteredCapability? {
        guard let c = byName[name], c.id.kind == kind else { return nil }
        return c
    }

    /// Every (kind, name) that loaded plugins provide: what a flow may name.
    package var catalog: Set<CapabilityID> {
        Set(byName.values.map(\.id))
    }

    /// The options each capability declares, by name; a capability that
    /// declares none is absent (its options are not checked).
    package var declaredOptions: [String: [PluginOption]] {
        byName.compactMapValues(\.declaredOptions)
    }

    /// The capabilities in name order.
    package var capabilities: [RegisteredCapability] {
        byName.values.sorted { $0.id.name < $1.id.name }
    }

    /// The records of plugins that are not loaded.
    package var problems: [PluginRecord] {
        records.filter { $0.status != .loaded }
    }
}
