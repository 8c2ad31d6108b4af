import FlowKit
import FlowdSystem

/// Whether a plugin is in use. The raw values are what `ListPlugins` shows.
package enum PluginStatus: String, Sendable, Hashable, Codable {
    /// Loaded; its capabilities are in use.
    case loaded
    /// Refused by the loader: a file check, the ABI, the entry point or the
    /// registration failed. ``PluginRecord/error`` says why.
    case failed
    /// Turned off: by the administrator's configuration, or by the crash guard
    /// after it crashed the daemon. ``PluginRecord/error`` says which.
    case disabled
}

/// A capability's kind and name: what a flow names and the engine's lint checks.
package struct CapabilityID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the capability does.
    package var kind: CapabilityKind
    /// Its dotted name.
    package var name: String

    /// Names a capability.
    package init(kind: CapabilityKind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// `submit-action flowd.spool`.
    package var description: String { "\(kind.rawValue) \(name)" }
}

/// One plugin file the loader looked at: what `ListPlugins` returns and what the
/// daemon writes to the journal.
package struct PluginRecord: Sendable, Hashable {
    /// The plugin's registered name, or the file name without `.so` when the
    /// plugin was refused before it could say its name.
    package var name: String
    /// The plugin's own version; empty when unknown.
    package var version: String
    /// The file the plugin was loaded from.
    package var path: String
    /// Loaded, failed or disabled.
    package var status: PluginStatus
    /// Why the plugin is `failed` or `disabled`: one line. Nil when loaded.
    package var error: String?
    /// The capabilities the plugin registered (also for a refused plugin, when
    /// the registration could be read).
    package var capabilities: [CapabilityID]
    /// The file's identity when it could be read.
    package var file: FileIdentity?

    /// A record from its parts.
    package init(
        name: String, version: String, path: String, status: PluginStatus, error: String?,
        capabilities: [CapabilityID], file: FileIdentity?
    ) {
        self.name = name
        self.version = version
        self.path = path
        self.status = status
        self.error = error
        self.capabilities = capabilities
        self.file = file
    }

    /// The distinct kinds among the capabilities, in `CapabilityKind` order.
    package var kinds: [CapabilityKind] {
        let present = Set(capabilities.map(\.kind))
        return CapabilityKind.allCases.filter { present.contains($0) }
    }
}

/// A plugin kept disabled because it crashed the daemon, until its file changes.
///
/// The loader creates these from the crash guard's leftovers; the daemon
/// persists them (the store's `plugin_state`) and passes them back on the next
/// start through ``PluginLoader/Configuration/quarantined``.
package struct PluginQuarantine: Sendable, Hashable, Codable {
    /// The plugin file.
    package var path: String
    /// The plugin's name as far as it is known (empty: not known).
    package var name: String
    /// The one-line reason shown in `ListPlugins`.
    package var reason: String
    /// The file as it was when it crashed the daemon. A different file at the
    /// same path lifts the quarantine.
    package var file: FileIdentity

    /// A quarantine from its parts (for a store that kept them).
    package init(path: String, name: String, reason: String, file: FileIdentity) {
        self.path = path
        self.name = name
        self.reason = reason
        self.file = file
    }
}
