// swift-tools-version:6.0
// FlowKit is its own package on purpose: SwiftPM links a `.dynamic` product that
// lives in the same package as an executable *statically* into that executable.
// The daemon and every plugin would then carry private copies of these types and
// `as?` casts across the dlopen boundary would fail. As a separate package the
// product is one shared `libFlowKit.so` that the daemon and the plugins both load.
import PackageDescription

let package = Package(
    name: "FlowKit",
    products: [
        .library(name: "FlowKit", type: .dynamic, targets: ["FlowKit"]),
        // Samples for a plugin's unit tests (contexts, fields, submissions,
        // answers), made as flowd makes them. For test targets only.
        .library(name: "FlowKitTesting", targets: ["FlowKitTesting"]),
    ],
    targets: [
        // The standard library inlines calls to libm (rounding in `Int(exactly:)`),
        // and a module that imports neither Glibc nor Foundation gets no `-lm`.
        .target(name: "FlowKit", linkerSettings: [.linkedLibrary("m")]),
        .target(name: "FlowKitTesting", dependencies: ["FlowKit"]),
        .testTarget(name: "FlowKitTests", dependencies: ["FlowKit", "FlowKitTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
