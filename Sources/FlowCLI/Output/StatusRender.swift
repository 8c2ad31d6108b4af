import DBus
import FlowEngine
import FlowProtocol
import FlowdSystem

extension Render {
    /// `flowctl status`: the daemon's `GetStatus` as a person reads it, with
    /// the uptime counted to `now` (microseconds since the epoch).
    package static func status(_ status: DaemonStatus, now: Int64, style: Style) -> String {
        var table = TextTable(headers: [])
        func row(_ label: String, _ text: String, red: Bool = false) {
            table.add(cells: [TextTable.Cell(label) { style.bold($0) }, TextTable.Cell(text) { red ? style.red($0) : $0 }])
        }
        let started = Int64(clamping: status.startedAt)
        var since = ""
        if let t = CalendarTime.utc(microsecondsSinceEpoch: started) {
            since = " (since \(t.year)-\(two(t.month))-\(two(t.day)) \(two(t.hour)):\(two(t.minute)) UTC)"
        }
        row("Version", status.version)
        row("Uptime", duration(seconds: max(0, now - started) / 1_000_000) + since)
        let total = status.sessions.values.reduce(0) { $0 + Int($1) }
        let byState = SessionState.allCases.compactMap { state in
            status.sessions[state.rawValue].map { "\(state.rawValue) \($0)" }
        }
        row("Sessions", byState.isEmpty ? "\(total)" : "\(total): " + byState.joined(separator: ", "))
        row("Flows", "\(status.flows.count) served" + (status.flows.isEmpty ? "" : ": " + status.flows.joined(separator: ", ")))
        if !status.refusedFlows.isEmpty {
            row("", "\(status.refusedFlows.count) refused:", red: true)
            for refusal in status.refusedFlows {
                row("", "  " + refusal.reason.split(separator: "\n").joined(separator: "; "), red: true)
            }
        }
        let plugins = PluginSummary.Status.allCases.map { "\(status.plugins[$0.rawValue] ?? 0) \($0.rawValue)" }
        row("Plugins", plugins.joined(separator: ", "))
        for (path, reason) in status.failedPlugins.sorted(by: { $0.key < $1.key }) {
            row("", "  \(path): \(reason)", red: true)
        }
        row("Limits", status.limits.sorted { $0.key < $1.key }.map { "\($0.key)=\(limit($0.key, $0.value))" }.joined(separator: " "))
        row("State", "\(status.stateDirectory), \(bytes(status.stateBytes))")
        return table.render(style: style)
    }

    /// `flowctl reload`: what flowd serves after the reload (`after`), the
    /// flows it added and removed when `before` is known, and each flow file
    /// it refused with flowd's reason.
    package static func reload(before: DaemonStatus?, after: DaemonStatus, locale: String, style: Style) -> String {
        func list(_ ids: [String]) -> String { ids.isEmpty ? "–" : ids.joined(separator: ", ") }
        var text = style.green("✓ ") + FlowctlText.reloadDone.text(locale) + "\n"
        text += FlowctlText.reloadServed.text(locale, ["count": "\(after.flows.count)", "flows": list(after.flows)]) + "\n"
        if let before {
            let added = after.flows.filter { !before.flows.contains($0) }
            let gone = before.flows.filter { !after.flows.contains($0) }
            if !added.isEmpty { text += FlowctlText.reloadAdded.text(locale, ["flows": list(added)]) + "\n" }
            if !gone.isEmpty { text += FlowctlText.reloadGone.text(locale, ["flows": list(gone)]) + "\n" }
        }
        if !after.refusedFlows.isEmpty {
            text += style.red(FlowctlText.reloadRefused.text(locale, ["count": "\(after.refusedFlows.count)"])) + "\n"
            for refusal in after.refusedFlows {
                text += "  " + style.red(refusal.reason.split(separator: "\n").joined(separator: "; ")) + "\n"
            }
        }
        return text
    }

    /// `2 d 3 h`, `5 h 12 min`, `42 s`: the two largest units.
    package static func duration(seconds: Int64) -> String {
        let units: [(String, Int64)] = [("d", 86400), ("h", 3600), ("min", 60), ("s", 1)]
        var rest = seconds
        var parts: [String] = []
        for (name, size) in units where rest >= size || (parts.isEmpty && size == 1) {
            parts.append("\(rest / size) \(name)")
            rest %= size
            if parts.count == 2 { break }
        }
        return parts.joined(separator: " ")
    }

    /// `1.4 MB`, `512 B`: decimal units.
    package static func bytes(_ count: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return unit == 0 ? "\(count) B" : "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A limit's value: a time span (a key ending in `Timeout` or `Retention`, seconds) as `7d`.
    private static func limit(_ key: String, _ value: DBusValue) -> String {
        guard key.hasSuffix("Timeout") || key.hasSuffix("Retention"), let seconds = value.uint64 else {
            return Render.value(value)
        }
        return String(duration(seconds: Int64(clamping: seconds)).filter { $0 != " " })
    }
}

extension JSONShapes {
    /// `reload`: the flows served after it, those added and removed (null
    /// when the status before could not be read), and the files refused.
    package static func reload(before: DaemonStatus?, after: DaemonStatus) -> JSONOutput {
        .object([
            "reloaded": .bool(true), "flows": .strings(after.flows),
            "added": before.map { before in .strings(after.flows.filter { !before.flows.contains($0) }) } ?? .null,
            "removed": before.map { before in .strings(before.flows.filter { !after.flows.contains($0) }) } ?? .null,
            "refusedFlows": refused(after.refusedFlows),
        ])
    }

    /// `status`: the `GetStatus` keys, and `uptimeSeconds` counted to `now`.
    package static func status(_ status: DaemonStatus, now: Int64) -> JSONOutput {
        .object([
            "version": .string(status.version), "startedAt": .unsigned(status.startedAt),
            "uptimeSeconds": .integer(max(0, now - Int64(clamping: status.startedAt)) / 1_000_000),
            "sessions": .sortedObject(status.sessions.mapValues { .integer(Int64($0)) }),
            "flows": .strings(status.flows),
            "refusedFlows": refused(status.refusedFlows),
            "plugins": .sortedObject(status.plugins.mapValues { .integer(Int64($0)) }),
            "failedPlugins": .sortedObject(status.failedPlugins.mapValues { .string($0) }),
            "limits": .sortedObject(status.limits.mapValues(JSONOutput.init)),
            "stateDirectory": .string(status.stateDirectory), "stateBytes": .unsigned(status.stateBytes),
        ])
    }

    /// The flow files flowd refused, each with its reason.
    private static func refused(_ flows: [DaemonStatus.RefusedFlow]) -> JSONOutput {
        .array(flows.map { .object(["file": .string($0.file), "reason": .string($0.reason)]) })
    }
}
