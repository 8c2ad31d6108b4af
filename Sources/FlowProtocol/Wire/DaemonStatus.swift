import DBus

/// What the daemon reports about itself: the `GetStatus` reply (since 1.2),
/// one `a{sv}` (docs/dbus-api.md). `flowctl status` shows it.
package struct DaemonStatus: Sendable, Hashable {
    /// A flow file that is not served, and why.
    package struct RefusedFlow: Sendable, Hashable {
        package var file: String
        /// Its problems, one per line.
        package var reason: String

        package init(file: String, reason: String) {
            self.file = file
            self.reason = reason
        }
    }

    /// The daemon's version.
    package var version: String
    /// When the daemon started: microseconds since the Unix epoch.
    package var startedAt: UInt64
    /// Live sessions by state name (`editing`, `review`, …), all uids; a
    /// state without sessions is left out.
    package var sessions: [String: UInt32]
    /// The ids of the flows served, sorted.
    package var flows: [String]
    /// The flow files refused at the last load.
    package var refusedFlows: [RefusedFlow]
    /// Plugins by status name (`loaded`, `failed`, `disabled`).
    package var plugins: [String: UInt32]
    /// Each plugin that failed to load: its file and why.
    package var failedPlugins: [String: String]
    /// The configured limits by key name of the configuration file
    /// (`MaxSessionsPerUser`, …): counts as `u`, time spans in seconds as `t`.
    package var limits: [String: DBusValue]
    /// The state directory.
    package var stateDirectory: String
    /// The bytes of the files in it.
    package var stateBytes: UInt64

    package init(
        version: String, startedAt: UInt64, sessions: [String: UInt32], flows: [String], refusedFlows: [RefusedFlow],
        plugins: [String: UInt32], failedPlugins: [String: String], limits: [String: DBusValue], stateDirectory: String,
        stateBytes: UInt64
    ) {
        self.version = version
        self.startedAt = startedAt
        self.sessions = sessions
        self.flows = flows
        self.refusedFlows = refusedFlows
        self.plugins = plugins
        self.failedPlugins = failedPlugins
        self.limits = limits
        self.stateDirectory = stateDirectory
        self.stateBytes = stateBytes
    }

    /// The encoder: the `a{sv}` of `GetStatus`.
    package var dbusValue: DBusValue {
        .vardict([
            "version": .string(version), "startedAt": .uint64(startedAt), "sessions": DBusValue(sessions),
            "flows": .strings(flows),
            "refusedFlows": .stringDictionary(Dictionary(refusedFlows.map { ($0.file, $0.reason) }, uniquingKeysWith: { a, _ in a })),
            "plugins": DBusValue(plugins), "failedPlugins": .stringDictionary(failedPlugins), "limits": .vardict(limits),
            "stateDirectory": .string(stateDirectory), "stateBytes": .uint64(stateBytes),
        ])
    }

    /// The decoder of the `GetStatus` reply.
    package init(dbusValue: DBusValue) throws(WireError) {
        let d = try WireDictionary(dbusValue, "the GetStatus reply")
        let refused: [String: String] = try d.required("refusedFlows")
        self.init(
            version: try d.required("version"), startedAt: try d.required("startedAt"), sessions: try d.required("sessions"),
            flows: try d.required("flows"),
            refusedFlows: refused.sorted { $0.key < $1.key }.map { RefusedFlow(file: $0.key, reason: $0.value) },
            plugins: try d.required("plugins"), failedPlugins: try d.required("failedPlugins"),
            limits: try d.required("limits", [String: DBusValue].self).mapValues { $0.variantValue ?? $0 },
            stateDirectory: try d.required("stateDirectory"), stateBytes: try d.required("stateBytes"))
    }
}
