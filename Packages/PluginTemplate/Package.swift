// swift-tools-version:6.0
// A flowd plugin, from the template installed with flowd's SDK
// (docs/plugins.md, "Start from the template"). Build it with `make`, not
// with a bare `swift build`: the Makefile gives the plugin a RUNPATH that
// works where flowd is installed.
import PackageDescription

/// The SDK flowd installed: FlowKit's sources (SwiftPM builds a dependency
/// from source). `make FLOWD_SDK=…` points elsewhere.
let sdk = Context.environment["FLOWD_SDK"] ?? "/usr/share/flowd/sdk"

let package = Package(
    name: "MyPlugin",
    products: [
        // The plugin: a dynamic library that flowd loads with dlopen.
        .library(name: "MyPlugin", type: .dynamic, targets: ["MyPlugin"]),
    ],
    dependencies: [
        .package(path: sdk + "/FlowKit"),
    ],
    targets: [
        // No `resources:` on purpose: SwiftPM's Bundle.module looks for a
        // directory next to the build, which does not exist where the plugin
        // is installed. Messages are compiled in (Messages.swift).
        .target(name: "MyPlugin", dependencies: [.product(name: "FlowKit", package: "FlowKit")]),
        .testTarget(
            name: "MyPluginTests",
            dependencies: ["MyPlugin", .product(name: "FlowKitTesting", package: "FlowKit")]),
    ],
    swiftLanguageModes: [.v6]
)
