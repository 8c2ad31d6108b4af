// Loads the shipped plugins the way flowd does: copies of the built .so files
// under their installed names in a plugin directory, through PluginLoader.
import FlowKit
import PluginHost
import PluginTestSupport

enum Shipped {
    /// Product → installed file name (what `make install` puts in
    /// `$(PREFIX)/lib/flowd/plugins`).
    static let files = [
        "SpoolPlugin": "spool.so", "CommandPlugin": "command.so", "WebhookPlugin": "webhook.so",
        "ValidatorsPlugin": "validators.so", "ProvidersPlugin": "providers.so",
    ]

    /// A caller over all shipped plugins, loaded from a fresh directory in `temp`.
    static func load(in temp: TemporaryDirectory) throws -> (PluginLoadReport, PluginCaller) {
        let dir = try temp.makeDirectory("plugins", mode: 0o755)
        for (product, file) in files {
            try PluginFiles.install(product, into: dir, as: file)
        }
        let crashGuard = MemoryCrashGuard()
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: crashGuard)
        return (report, PluginCaller(registry: report.registry, crashGuard: crashGuard, executor: PluginExecutor()))
    }
}

extension PluginCallResult {
    /// `.some(message)` for a failure (the message may be nil), nil otherwise.
    var failureMessage: String?? {
        if case .failure(let message, _) = self { return .some(message) }
        return nil
    }

    /// The detail of a failure, or nil.
    var failureDetail: String? {
        if case .failure(_, let detail) = self { return detail }
        return nil
    }

    /// The value of a success, or nil.
    var value: Value? {
        if case .success(let v) = self { return v }
        return nil
    }
}
