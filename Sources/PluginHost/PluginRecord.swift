import FlowKit

/// Whether a plugin is in use. The raw values are what `ListPlugins` shows.
public enum PluginStatus: String, Sendable, Hashable, Codable {
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
public struct CapabilityID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the capability does.
    public var kind: CapabilityKind
    /// Its dotted name.
    public var name: String

    /// Names a capability.
    public init(kind: CapabilityKind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// `submit-action flowd.spool`.
    public var description: String { "\(kind.rawValue) \(name)" }
}

/// Identifies one version of a file: if any of these change, it is a different
/// file. The crash guard uses it to keep a crashed plugin disabled "until its
/// file changes".
public struct FileIdentity: Sendable, Hashable, Codable {
    /// `st_dev`.
    public var device: UInt64
    /// `st_ino`.
    public var inode: UInt64
    /// `st_size` in bytes.
    public var size: Int64
    /// `st_mtim.tv_sec`.
    public var modifiedSeconds: Int64
    /// `st_mtim.tv_nsec`.
    public var modifiedNanoseconds: Int64

    /// An identity from its parts (for a store that kept them).
    public init(device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, size: status.size,
            modifiedSeconds: status.modifiedSeconds, modifiedNanoseconds: status.modifiedNanoseconds)
    }
}

/// One plugin file the loader looked at: what `ListPlugins` returns and what the
/// daemon writes to the journal.
public struct PluginRecord: Sendable, Hashable {
    /// The plugin's registered name, or the file name without `.so` when the
    /// plugin was refused before it could say its name.
    public var name: String
    /// The plugin's own version; empty when unknown.
    public var version: String
    /// The file the plugin was loaded from.
    public var path: String
    /// Loaded, failed or disabled.
    public var status: PluginStatus
    /// Why the plugin is `failed` or `disabled`: one line. Nil when loaded.
    public var error: String?
    /// The capabilities the plugin registered (also for a refused plugin, when
    /// the registration could be read).
    public var capabilities: [CapabilityID]
    /// The file's identity when it could be read.
    public var file: FileIdentity?

    /// A record from its parts.
    public init(
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
    public var kinds: [CapabilityKind] {
        let present = Set(capabilities.map(\.kind))
        return CapabilityKind.allCases.filter { present.contains($0) }
    }
}

/// A plugin kept disabled because it crashed the daemon, until its file changes.
///
/// The loader creates these from the crash guard's leftovers; the daemon
/// persists them (the store's `plugin_state`) and passes them back on the next
/// start through ``PluginLoader/Configuration/quarantined``.
public struct PluginQuarantine: Sendable, Hashable, Codable {
    /// The plugin file.
    public var path: String
    /// The plugin's name as far as it is known.
    public var name: String
    /// The one-line reason shown in `ListPlugins`.
    public var reason: String
    /// The file as it was when it crashed the daemon. A different file at the
    /// same path lifts the quarantine.
    public var file: FileIdentity

    /// A quarantine from its parts (for a store that kept them).
    public init(path: String, name: String, reason: String, file: FileIdentity) {
        self.path = path
        self.name = name
        self.reason = reason
        self.file = file
    }
}
