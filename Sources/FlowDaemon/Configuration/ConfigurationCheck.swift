import FlowEngine
import FlowdSystem
import PluginHost

/// `flowd --check-config`: reads the configuration as a start or a reload
/// would, loads the plugins and flows it names, prints the effective
/// configuration, and says whether a reload would serve everything.
///
/// Nothing is written: no state directory, no database, no bus. The plugins
/// are dlopened (their registration is what flows are checked against), but
/// no plugin call is made.
package enum ConfigurationCheck {
    /// What the check found.
    package struct Result {
        /// The report, for stdout: the files read, then the effective
        /// configuration as a configuration file, then the plugins and flows.
        package var text: String
        /// Every problem, one line each, for stderr.
        package var problems: [String]
        /// What flowd would only warn about (a directory it cannot read), for stderr.
        package var warnings: [String] = []
        /// 0 when everything is served, `configuration` (78) otherwise.
        package var status: SysExits
    }

    /// Runs the check for `options`.
    package static func run(_ options: DaemonOptions, loader: ConfigurationLoader) -> Result {
        let configuration: DaemonConfiguration
        do {
            configuration = try loader.load(options)
        } catch {
            return Result(text: "", problems: [error.description], status: .configuration)
        }
        var lines = [
            "# flowd --check-config: the effective configuration",
            configuration.files.isEmpty
                ? "# read: no configuration file (built-in defaults and the command line)"
                : "# read: " + configuration.files.joined(separator: " "),
        ]
        lines += configuration.fileLines
        var problems: [String] = []
        var warnings: [String] = []

        let report = PluginLoader(configuration: configuration.pluginLoaderConfiguration())
            .load(crashGuard: MemoryCrashGuard())
        lines.append("")
        for record in report.registry.records {
            lines.append("# plugin \(record.name) \(record.version): \(record.status.rawValue) (\(record.path))")
            if record.status == .failed {
                problems.append("plugin refused: \(record.path): \(record.error ?? record.status.rawValue)")
            }
        }
        for problem in report.directoryProblems {
            warnings.append("plugin directory \(problem.path): \(problem.reason)")
        }

        let catalog = FlowCatalog.load(
            directories: configuration.flowDirectories,
            capabilities: CapabilityCatalog(registry: report.registry))
        for entry in catalog.sortedFlows {
            lines.append("# flow \(entry.definition.id): served (\(entry.file))")
        }
        for shadow in catalog.shadowed {
            lines.append("# flow \(shadow.id): \(shadow.file) is overridden by \(shadow.winner)")
        }
        for refusal in catalog.refused {
            lines.append("# flow refused: \(refusal.file)")
            problems += refusal.problems.map { "flow refused: \($0)" }
        }
        for directory in catalog.unreadableDirectories {
            warnings.append("cannot read the flows directory \(directory.path): \(directory.reason)")
        }
        return Result(
            text: lines.joined(separator: "\n") + "\n", problems: problems, warnings: warnings,
            status: problems.isEmpty ? .ok : .configuration)
    }
}

extension DaemonConfiguration {
    /// This configuration as the lines of a configuration file that gives
    /// it: every key, in the sample file's order.
    package var fileLines: [String] {
        var lines = ["[Daemon]", "Bus=\(bus.description)"]
        lines += flowDirectories.isEmpty ? ["FlowsDirectory="] : flowDirectories.map { "FlowsDirectory=\($0)" }
        lines += pluginDirectories.isEmpty ? ["PluginDirectory="] : pluginDirectories.map { "PluginDirectory=\($0)" }
        if let stateDirectory { lines.append("StateDirectory=\(stateDirectory)") }
        lines += [
            "Durability=\(durability.rawValue)",
            "Verbose=\(verbose ? "yes" : "no")",
            "",
            "[Limits]",
            "MaxStringLength=\(limits.maxStringLength)",
            "MaxAnswersPerCall=\(limits.maxAnswersPerCall)",
            "MaxListLength=\(limits.maxListLength)",
            "MaxSessionsPerUser=\(limits.maxSessionsPerUser)",
            "MaxSessions=\(limits.maxSessions)",
            "IdleTimeout=\(TimeSpan.text(limits.idleTimeout))",
            "SettledRetention=\(TimeSpan.text(limits.settledRetention))",
            "",
            "[Plugins]",
            "CallTimeout=\(TimeSpan.text(pluginCallTimeout))",
            "Disable=\(disabledPlugins.joined(separator: " "))",
        ]
        for (name, plugin) in plugins.sorted(by: { $0.key < $1.key }) {
            lines += [
                "", "[Plugin \(name)]", "Isolated=\(plugin.isolated ? "yes" : "no")",
                "MemoryLimit=\(plugin.memoryLimit.map { $0 % (1 << 20) == 0 ? "\($0 >> 20)M" : "\($0)" } ?? "infinity")",
                "Network=\(plugin.network ? "yes" : "no")",
            ]
        }
        return lines
    }
}
