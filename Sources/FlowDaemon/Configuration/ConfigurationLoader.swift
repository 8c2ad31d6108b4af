import FlowdSystem

/// Reads the configuration file, its drop-ins and the command line into one
/// ``DaemonConfiguration``.
///
/// Order, later wins: built-in defaults → the main file → `<file>.d/*.conf` in
/// lexical order → (for a per-user daemon) `$XDG_CONFIG_HOME/flowd/flowd.conf`
/// → command-line options.
package struct ConfigurationLoader: Sendable {
    /// Reads a whole file; nil when it does not exist. Throws for any other failure.
    package var readFile: @Sendable (String) throws(ConfigurationError) -> String?
    /// Lists a directory's entry names; nil when it does not exist.
    package var listDirectory: @Sendable (String) -> [String]?
    package var environment: [String: String]
    package var layout: InstallLayout

    package init(
        layout: InstallLayout, environment: [String: String],
        readFile: @escaping @Sendable (String) throws(ConfigurationError) -> String? = ConfigurationLoader.readFileFromDisk,
        listDirectory: @escaping @Sendable (String) -> [String]? = ConfigurationLoader.listDirectoryOnDisk
    ) {
        self.layout = layout
        self.environment = environment
        self.readFile = readFile
        self.listDirectory = listDirectory
    }

    /// The configuration file read when `--config` is not given.
    package var defaultConfigFile: String { layout.sysconfDirectory + "/flowd/flowd.conf" }

    /// Builds the configuration for `options`.
    ///
    /// The drop-ins in `<file>.d/` are read whether or not the main file
    /// exists, as systemd reads its own: a fresh install with only a drop-in
    /// applies it. ``DaemonConfiguration/files`` lists what was read.
    package func load(_ options: DaemonOptions) throws(ConfigurationError) -> DaemonConfiguration {
        var config = DaemonConfiguration(layout: layout)
        let main = options.configFile ?? defaultConfigFile
        if let text = try readFile(main) {
            try config.apply(INIFile(parsing: text, file: main))
            config.files.append(main)
        } else if options.configFile != nil {
            throw ConfigurationError(file: main, message: "no such file (given with --config)")
        }
        let dropInDirectory = main + ".d"
        for name in (listDirectory(dropInDirectory) ?? []).filter({ $0.hasSuffix(".conf") }).sorted() {
            let path = dropInDirectory + "/" + name
            if let text = try readFile(path) {
                try config.apply(INIFile(parsing: text, file: path))
                config.files.append(path)
            }
        }
        return try finish(config, options)
    }

    private func finish(_ base: DaemonConfiguration, _ options: DaemonOptions) throws(ConfigurationError) -> DaemonConfiguration {
        var config = base
        if let bus = options.bus { config.bus = bus }
        if config.bus == .session, let userFile = userConfigFile(), let text = try readFile(userFile) {
            try config.apply(INIFile(parsing: text, file: userFile))
            config.files.append(userFile)
            if let bus = options.bus { config.bus = bus }
        }
        if !options.flowDirectories.isEmpty { config.flowDirectories = options.flowDirectories.map(absolute) }
        if !options.pluginDirectories.isEmpty { config.pluginDirectories = options.pluginDirectories.map(absolute) }
        if let dir = options.stateDirectory { config.stateDirectory = absolute(dir) }
        if options.verbose { config.verbose = true }
        if config.stateDirectory == nil { config.stateDirectory = defaultStateDirectory(for: config.bus) }
        return config
    }

    private func userConfigFile() -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/flowd/flowd.conf" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.config/flowd/flowd.conf" }
        return nil
    }

    /// `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`), then the system
    /// location for the system bus, else the XDG state directory.
    func defaultStateDirectory(for bus: BusChoice) -> String? {
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first, fromSystemd.hasPrefix("/") {
            return String(fromSystemd)
        }
        if bus == .system { return layout.localStateDirectory + "/lib/flowd" }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/flowd" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/flowd" }
        return nil
    }

    private func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        let cwd = environment["PWD"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? CurrentProcess.currentDirectory() ?? "/"
        return cwd + "/" + path
    }

    /// Reads a configuration file from disk (at most 1 MiB; a larger file is an error).
    @Sendable package static func readFileFromDisk(_ path: String) throws(ConfigurationError) -> String? {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path, limit: 1 << 20)
        } catch {
            if error.errno == .noSuchFileOrDirectory { return nil }
            throw ConfigurationError(file: path, message: "cannot read: \(error.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(file: path, message: "not valid UTF-8")
        }
        return text
    }

    /// Lists a directory on disk; nil when it cannot be read.
    @Sendable package static func listDirectoryOnDisk(_ path: String) -> [String]? {
        try? FileSystem.directoryEntries(path)
    }
}
