// swift-tools-version:6.0
// flowd: a daemon that hosts multi-step form flows over D-Bus.
// The module map is explained in docs/architecture.md.
import PackageDescription

let flowKit: Target.Dependency = .product(name: "FlowKit", package: "FlowKit")

/// A plugin that ships with flowd: a dynamic library built from `Plugins/<dir>`.
func shippedPlugin(_ name: String, dir: String, extra: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: [flowKit, "FlowdPluginSupport", "FlowdSystem"] + extra, path: "Plugins/\(dir)")
}

/// A plugin the loader and call-path tests use (well-behaved or deliberately
/// broken): `Tests/Fixtures/Plugins/<dir>`. Never installed.
func fixturePlugin(_ name: String, dir: String) -> Target {
    .target(name: name, dependencies: [flowKit], path: "Tests/Fixtures/Plugins/\(dir)")
}

/// The fixture plugins, as (product and target name, directory).
let fixturePlugins: [(String, String)] = [
    ("FixtureTestPlugin", "TestPlugin"),
    ("FixtureWrongABIPlugin", "WrongABI"),
    ("FixtureNoEntryPlugin", "NoEntry"),
    ("FixtureDuplicatePlugin", "Duplicate"),
    ("FixtureBadNamesPlugin", "BadNames"),
    ("FixtureBadOptionsPlugin", "BadOptions"),
    ("FixtureThrowingPlugin", "Throwing"),
    ("FixtureHangPlugin", "Hang"),
    ("FixtureCrashPlugin", "Crash"),
    ("FixtureCrashOnLoadPlugin", "CrashOnLoad"),
    ("FixtureCrashInABIPlugin", "CrashInABI"),
    ("FixturePatientPlugin", "Patient"),
    ("FixtureOddPlugin", "Odd"),
    ("FixtureOtherFlowKitPlugin", "OtherFlowKit"),
    ("FixtureUnrulyPlugin", "Unruly"),
]

/// The modules every D-Bus call to flowd runs through: their release builds
/// leave out Swift's dynamic exclusivity checks, which cost about 5% of each
/// call's instructions (docs/performance.md, the twelfth round; why it is
/// safe enough: docs/architecture.md). Debug builds keep them: the tests and
/// the fuzzers run debug builds.
let callPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

/// The fuzz targets, as (name, what they fuzz); each is `Fuzz/Targets/<name>`.
let fuzzTargets: [(String, [Target.Dependency])] = [
    ("json", ["FlowEngine", "FlowCLI"]),
    ("flow", ["FlowEngine", flowKit]),
    ("pattern", ["FlowEngine", flowKit]),
    ("session", ["FlowEngine", flowKit]),
    ("config", ["FlowDaemon"]),
    ("dbus-args", ["FlowDaemon", "DBus"]),
]

let package = Package(
    name: "flowd",
    products: [
        .executable(name: "flowd", targets: ["flowd"]),
        .executable(name: "flowctl", targets: ["flowctl"]),
        .executable(name: "flowd-bench", targets: ["FlowBench"]),
        .executable(name: "flowd-gtk", targets: ["flowd-gtk"]),
        // Loads one plugin file as flowd does and calls its capabilities (installed).
        .executable(name: "flowd-plugin-probe", targets: ["flowd-plugin-probe"]),
        // The process an isolated plugin runs in (installed next to the plugins).
        .executable(name: "flowd-plugin-host", targets: ["flowd-plugin-host"]),
        // Shipped plugins (installed to $(PREFIX)/lib/flowd/plugins by `make install`).
        .library(name: "SpoolPlugin", type: .dynamic, targets: ["SpoolPlugin"]),
        .library(name: "CommandPlugin", type: .dynamic, targets: ["CommandPlugin"]),
        .library(name: "WebhookPlugin", type: .dynamic, targets: ["WebhookPlugin"]),
        .library(name: "ValidatorsPlugin", type: .dynamic, targets: ["ValidatorsPlugin"]),
        .library(name: "ProvidersPlugin", type: .dynamic, targets: ["ProvidersPlugin"]),
    ] + fixturePlugins.map { name, _ in
        // Test fixtures: plugins the loader must refuse or survive. Never installed.
        .library(name: name, type: .dynamic, targets: [name])
    } + [
        // A fixture in C: its library constructor kills the process during dlopen.
        .library(name: "FixtureCrashInConstructorPlugin", type: .dynamic, targets: ["FixtureCrashInConstructorPlugin"]),
    ],
    dependencies: [
        .package(path: "Packages/FlowKit"),
    ],
    targets: [
        // C libraries from Debian, wrapped one header each.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // GTK 4.8 and libadwaita 1.2 for the desktop client, with the helpers Swift cannot call.
        .systemLibrary(name: "CAdw", pkgConfig: "libadwaita-1", providers: [.apt(["libadwaita-1-dev"])]),
        // The C declarations Swift's Glibc module leaves out (epoll, eventfd,
        // timerfd, signalfd, the _GNU_SOURCE functions, the wait macros), and
        // the child's side of a spawn, which must be C (spawn.c).
        .target(name: "CFlowdSystem"),
        // The shared system layer: errno, files, child processes, threads,
        // locks, clocks, signals, the environment, sysexits, the version.
        // The only module besides the `Lib*` seams that talks to C.
        .target(name: "FlowdSystem", dependencies: ["CFlowdSystem"], swiftSettings: callPath),

        // The pure engine: flow model, lint, validation, session state machine, localization.
        .target(
            name: "FlowEngine",
            dependencies: [flowKit],
            // Built-in strings, one file per locale (see docs/flow-format.md, "Localization").
            resources: ["en", "es", "fr", "de", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant"].map {
                .embedInCode("Resources/l10n/\($0).json")
            },
            // `Double.rounded()` is inlined as calls into libm, and a module that
            // imports neither Glibc nor Foundation gets no `-lm` of its own.
            swiftSettings: callPath,
            linkerSettings: [.linkedLibrary("m")]
        ),
        // SQLite persistence of sessions (opaque payloads plus indexed columns).
        .target(name: "FlowStore", dependencies: ["CSQLite", "FlowdSystem"], swiftSettings: callPath),
        // The epoll event loop the daemon and the bus connection run on.
        .target(name: "Reactor", dependencies: ["FlowdSystem", "CFlowdSystem"], swiftSettings: callPath),
        // The deterministic loop tests drive by hand, also a SerialExecutor
        // (swift-nio's NIOEmbedded). Tests only.
        .target(name: "ReactorTesting", dependencies: ["Reactor", "FlowdSystem"], path: "Tests/ReactorTesting"),
        // Swift over libdbus-1.
        .target(name: "DBus", dependencies: ["CDBus", "FlowdSystem", "Logging", "Reactor"], swiftSettings: callPath),
        // The logging API (swift-log's shape): Logger, levels, the rule that
        // keeps secrets out of log lines, a stderr backend and a test capture.
        .target(name: "Logging", dependencies: ["FlowdSystem"], swiftSettings: callPath),
        // sd_notify, the journal log backend, and a stand-in notify socket.
        .target(name: "Systemd", dependencies: ["CSystemd", "FlowdSystem", "Logging"]),
        // The crash guard's fatal-signal handlers and thread markers: C, because
        // they must be async-signal-safe (a `_Thread_local` marker, a store to
        // mapped memory).
        .target(name: "CPluginGuard"),
        // The safe dlopen loader and the plugin call path (timeouts, crash guard).
        .target(name: "PluginHost", dependencies: [flowKit, "CPluginGuard", "FlowdSystem"]),
        // The D-Bus contract (docs/dbus-api.md) written once: names, error
        // names, properties, signals and the wire structs, each with one
        // encoder (the daemon) and one decoder (the clients).
        .target(name: "FlowProtocol", dependencies: ["DBus", "FlowEngine", flowKit], swiftSettings: callPath),
        // The typed client of the whole API, on a Reactor loop of its own:
        // flowctl, flowd-bench and the tests use it, a desktop client builds on it.
        .target(name: "FlowClient", dependencies: ["FlowProtocol", "DBus", "Reactor", "FlowEngine", "FlowdSystem", flowKit]),
        // The service: Manager and Session objects, authorization, limits, configuration.
        .target(
            name: "FlowDaemon",
            dependencies: [
                "FlowEngine", "FlowProtocol", "FlowStore", "Reactor", "DBus", "Systemd", "PluginHost", "FlowdSystem",
                "Logging", flowKit,
            ],
            swiftSettings: callPath
        ),
        // flowctl's commands and rendering, kept out of main.swift so tests can reach them.
        .target(
            name: "FlowCLI",
            // PluginHost: `check --plugin-dir` loads plugins as flowd loads them.
            // Systemd: logind's session, for how polkit's text agent registers.
            dependencies: [
                "FlowClient", "FlowProtocol", "DBus", "FlowEngine", "FlowdSystem", "Logging", "PluginHost", "Systemd", flowKit,
            ],
            // flowctl's own strings (prompts, captions, error sentences), one file per locale.
            resources: ["en", "es", "fr", "de", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant"].map {
                .embedInCode("Resources/l10n/\($0).json")
            }),

        // The desktop client's one seam over GTK and libadwaita: typed widgets,
        // signals, accessibility, and libdispatch's main queue drained by GLib's loop.
        .target(name: "Adwaita", dependencies: ["CAdw", "FlowdSystem"], linkerSettings: [.linkedLibrary("dispatch")]),
        // The desktop client: the window on FlowClient, its pages, navigation, keyboard, its own strings.
        .target(
            name: "FlowDesktop",
            dependencies: ["Adwaita", "FlowClient", "FlowProtocol", "DBus", "FlowEngine", "FlowdSystem", flowKit],
            // The app's own strings (window chrome, start page), one file per locale.
            resources: ["en", "es", "fr", "de", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant"].map {
                .embedInCode("Resources/l10n/\($0).json")
            }
        ),

        .executableTarget(name: "flowd", dependencies: ["FlowDaemon", "FlowdSystem"], swiftSettings: callPath),
        .executableTarget(name: "flowctl", dependencies: ["FlowCLI"]),
        .executableTarget(
            name: "flowd-plugin-probe", dependencies: ["PluginHost", "FlowdSystem", flowKit], path: "Sources/PluginProbe"),
        // Loads one isolated plugin in a sandboxed process of its own and
        // serves flowd's calls to it over a socketpair.
        .executableTarget(
            name: "flowd-plugin-host", dependencies: ["PluginHost", "FlowdSystem"], path: "Sources/PluginHostHelper"),
        .executableTarget(name: "flowd-gtk", dependencies: ["FlowDesktop", "FlowdSystem"]),
        .executableTarget(
            name: "FlowBench",
            dependencies: [
                "FlowClient", "FlowDaemon", "FlowProtocol", "DBus", "Reactor", "FlowEngine", "FlowStore", "FlowdSystem",
                "Systemd", "PluginHost", flowKit,
            ]),
        // Measures the session store (docs in FlowStore.docc). Never installed.
        .executableTarget(
            name: "flowstore-bench", dependencies: ["FlowStore", "FlowdSystem"], path: "Sources/FlowStoreBench"),
        // Counts reading a received call, libdbus' way and flowd's own
        // (docs/performance.md, the eighth round, G). Never installed.
        .executableTarget(name: "dbus-read-bench", dependencies: ["DBus", "FlowdSystem"], path: "Sources/DBusReadBench"),

        // Code the shipped plugins share (the submission JSON, option parsing,
        // message localization); linked into each of them, with FlowdSystem.
        // Only FlowKit types cross between a plugin and the daemon: both link
        // the one libFlowKit.so, and each plugin keeps its own static copy of
        // FlowdSystem to itself.
        .target(name: "FlowdPluginSupport", dependencies: [flowKit, "FlowdSystem"], path: "Plugins/Support"),
        shippedPlugin("SpoolPlugin", dir: "Spool"),
        shippedPlugin("CommandPlugin", dir: "Command"),
        shippedPlugin("WebhookPlugin", dir: "Webhook"),
        shippedPlugin("ValidatorsPlugin", dir: "Validators"),
        shippedPlugin("ProvidersPlugin", dir: "Providers"),
    ] + fixturePlugins.map { name, dir in fixturePlugin(name, dir: dir) } + [
        .target(
            name: "FixtureCrashInConstructorPlugin", path: "Tests/Fixtures/Plugins/CrashInConstructor", publicHeadersPath: "."),
        // Helpers for the plugin tests: the build directory, plugin directories
        // made of copies of built plugins, a loopback HTTP server.
        .target(
            name: "PluginTestSupport", dependencies: ["PluginHost", flowKit],
            path: "Tests/Fixtures/Plugins/Support"),
        // Loads a plugin directory and calls a capability in a process of its
        // own, so the crash-guard tests can let a plugin kill it. Never installed.
        .executableTarget(
            name: "plugin-host-probe", dependencies: ["PluginHost", flowKit], path: "Tests/Fixtures/Plugins/Probe"),

        // Runs a GLib main loop with the main-queue bridge and checks that main-actor
        // work runs on it, in a process of its own (no display needed). Never installed.
        .executableTarget(
            name: "flowd-gtk-mainloop-probe", dependencies: ["Adwaita", "FlowdSystem"],
            path: "Tests/Fixtures/Desktop/MainLoopProbe"),

        // Shared test helpers: temporary directories, a test child, a private
        // dbus-daemon and a raw D-Bus proxy; FlowdSystem (child processes,
        // locks) re-exported.
        .target(name: "TestSupport", dependencies: ["FlowdSystem", "DBus", "Logging"], path: "Tests/TestSupport"),

        .testTarget(name: "FlowEngineTests", dependencies: ["FlowEngine", flowKit]),
        .testTarget(name: "FlowStoreTests", dependencies: ["FlowStore", "TestSupport"]),
        .testTarget(name: "ReactorTests", dependencies: ["Reactor", "ReactorTesting", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["TestSupport", "DBus", "Reactor", "ReactorTesting", "CDBus", "Logging"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging", "TestSupport"]),
        .testTarget(name: "SystemdTests", dependencies: ["Systemd", "Logging", "TestSupport"]),
        .testTarget(name: "FlowdSystemTests", dependencies: ["FlowdSystem", "TestSupport"]),
        .testTarget(name: "PluginHostTests", dependencies: ["PluginTestSupport", "PluginHost", "FlowdSystem", flowKit]),
        .testTarget(name: "FlowProtocolTests", dependencies: ["FlowProtocol", "DBus", "FlowEngine", flowKit]),
        .testTarget(
            name: "FlowDaemonTests",
            dependencies: [
                "TestSupport", "FlowDaemon", "FlowClient", "FlowProtocol", "DBus", "Reactor", "ReactorTesting", "FlowEngine",
                "FlowStore", "Systemd", "Logging", "PluginHost", flowKit,
            ]),
        .testTarget(
            name: "FlowCLITests",
            dependencies: ["TestSupport", "FlowCLI", "FlowClient", "FlowProtocol", "DBus", "FlowEngine", "FlowdSystem", flowKit]),
        .testTarget(
            name: "FlowDesktopTests",
            dependencies: ["FlowDesktop", "Adwaita", "FlowClient", "FlowProtocol", "FlowEngine", flowKit, "TestSupport"]),
        .testTarget(name: "PluginTests", dependencies: ["PluginTestSupport", "PluginHost", "FlowdSystem", "FlowEngine", flowKit]),
        // Runs the built flowd-bench once, quickly; checks its output's shape, never its numbers.
        .testTarget(name: "FlowBenchTests", dependencies: ["TestSupport"]),
        // The fuzz targets (Fuzz/, docs/fuzzing.md): built as usual they
        // replay the inputs named on their command line; Fuzz/run.sh builds
        // them with libFuzzer and AddressSanitizer and fuzzes.
        .target(name: "FuzzSupport", dependencies: ["FlowdSystem"], path: "Fuzz/Support"),
    ] + fuzzTargets.map { name, dependencies in
        .executableTarget(
            name: "fuzz-\(name)", dependencies: ["FuzzSupport"] + dependencies, path: "Fuzz/Targets/\(name)")
    } + [
        // Holds the architecture to what docs/architecture.md says (which
        // files may talk to C); reads the source tree, links nothing.
        .testTarget(name: "ArchitectureTests"),
    ],
    swiftLanguageModes: [.v6]
)
