import FlowProtocol
import PluginHost

extension PluginSummary {
    /// The `ListPlugins` entry of what the loader found.
    init(record: PluginRecord) {
        let status: Status
        switch record.status {
        case .loaded: status = .loaded
        case .failed: status = .failed
        case .disabled: status = .disabled
        }
        self.init(
            name: record.name, version: record.version, kinds: Array(Set(record.kinds.map(\.rawValue))).sorted(),
            capabilities: record.capabilities.map(\.name), path: record.path, status: status, error: record.error ?? "")
    }
}
