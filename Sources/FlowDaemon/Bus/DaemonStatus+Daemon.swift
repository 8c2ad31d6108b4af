import DBus
import FlowProtocol

extension DaemonStatus {
    /// `GetStatus`'s report from what the daemon's parts know.
    init(
        version: String, startedAt: Int64, sessionsByState: [String: Int], catalog: FlowCatalog, plugins: [PluginSummary],
        limits: SessionLimits, stateDirectory: String, stateBytes: Int64
    ) {
        var pluginCounts: [String: UInt32] = [:]
        for status in PluginSummary.Status.allCases { pluginCounts[status.rawValue] = 0 }
        for plugin in plugins { pluginCounts[plugin.status.rawValue, default: 0] += 1 }
        var failed: [String: String] = [:]
        for plugin in plugins where plugin.status == .failed { failed[plugin.path] = plugin.error }
        self.init(
            version: version, startedAt: UInt64(clamping: startedAt),
            sessions: sessionsByState.filter { $0.value > 0 }.mapValues { UInt32(clamping: $0) },
            flows: catalog.sortedFlows.map(\.definition.id),
            refusedFlows: catalog.refused.map { RefusedFlow(file: $0.file, reason: $0.problems.joined(separator: "\n")) },
            plugins: pluginCounts, failedPlugins: failed, limits: limits.statusValues, stateDirectory: stateDirectory,
            stateBytes: UInt64(clamping: stateBytes))
    }
}

extension SessionLimits {
    /// The limits by their key in flowd.conf: counts as `u`, time spans as `t` seconds.
    var statusValues: [String: DBusValue] {
        [
            "MaxStringLength": .uint32(UInt32(clamping: maxStringLength)),
            "MaxAnswersPerCall": .uint32(UInt32(clamping: maxAnswersPerCall)),
            "MaxListLength": .uint32(UInt32(clamping: maxListLength)),
            "MaxSessionsPerUser": .uint32(UInt32(clamping: maxSessionsPerUser)),
            "MaxSessions": .uint32(UInt32(clamping: maxSessions)),
            "IdleTimeout": .uint64(UInt64(clamping: idleTimeout.components.seconds)),
            "SettledRetention": .uint64(UInt64(clamping: settledRetention.components.seconds)),
        ]
    }
}
