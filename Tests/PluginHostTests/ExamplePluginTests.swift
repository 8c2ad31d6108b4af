// The example plugin in docs/plugins.md, built the way its reader would build
// it (its own package, FlowKit by path) and loaded through the real loader.
import FlowKit
import Foundation
import PluginHost
import PluginTestSupport
import Testing

@Suite("docs/plugins.md example")
struct ExamplePluginTests {
    /// The `` ```swift file=PATH `` blocks of the page, in order.
    static func exampleFiles(_ markdown: String) -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        var lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix("```swift file=") else { continue }
            let path = String(line.dropFirst("```swift file=".count))
            var body: [Substring] = []
            while let next = lines.popFirst(), next != "```" { body.append(next) }
            files.append((path, body.joined(separator: "\n") + "\n"))
        }
        return files
    }

    @Test("builds outside the repository against FlowKit, loads, and works", .timeLimit(.minutes(20)))
    func buildsAndLoads() async throws {
        let root = BuildProducts.packageRoot
        let markdown = try String(contentsOfFile: root + "/docs/plugins.md", encoding: .utf8)
        let files = Self.exampleFiles(markdown)
        #expect(files.map(\.path) == ["Package.swift", "Sources/ExamplePlugin/ExamplePlugin.swift"])

        let temp = try TemporaryDirectory(prefix: "flowd-example-plugin")
        let package = temp.appending("ExamplePlugin")
        for (path, text) in files {
            let url = URL(fileURLWithPath: package + "/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // The page points at the installed SDK; here it is the repository's.
            let adjusted = text.replacingOccurrences(
                of: "/usr/share/flowd/sdk/FlowKit", with: root + "/Packages/FlowKit")
            try adjusted.write(to: url, atomically: true, encoding: .utf8)
        }
        let build = try Subprocess.run(
            "/usr/bin/env", ["swift", "build", "--package-path", package, "--product", "ExamplePlugin"],
            timeout: 1200)
        #expect(build.exitCode == 0, "swift build failed:\n\(build.standardOutput)\n\(build.standardError)")
        guard build.exitCode == 0 else { return }

        let plugins = try temp.makeDirectory("plugins")
        let built = package + "/.build/debug/libExamplePlugin.so"
        try FileManager.default.copyItem(atPath: built, toPath: plugins + "/example.so")
        chmod(plugins + "/example.so", 0o644)
        let crashGuard = MemoryCrashGuard()
        let report = PluginLoader(configuration: .init(directories: [plugins])).load(crashGuard: crashGuard)
        let record = try #require(report.registry.records.first)
        #expect(record.status == .loaded, "\(record.error ?? "")")
        #expect(record.name == "example")

        // Its option declaration reaches the registry; the validator declares none.
        #expect(report.registry.declaredOptions == ["example.rooms": [PluginOption(name: "rooms", type: .strings, required: true)]])

        let caller = PluginCaller(registry: report.registry, crashGuard: crashGuard, executor: PluginExecutor())
        let field = Samples.field("vat", label: "VAT number")
        #expect(await caller.validateField("example.vat-number", value: .text("DE 123 456 789"), field: field,
            context: Samples.context()) == .success(.accepted))
        #expect(await caller.validateField("example.vat-number", value: .text("ATU12345678"), field: field,
            context: Samples.context()) == .success(.accepted))
        #expect(await caller.validateField("example.vat-number", value: .text("DE12345"), field: field,
            context: Samples.context(locale: "de")) == .success(.rejected("Diese USt-IdNr. hat nicht das richtige Format.")))
        #expect(await caller.validateField("example.vat-number", value: .text("XX123"), field: field,
            context: Samples.context()) == .success(.rejected("Enter a VAT number with its country code, such as DE123456789.")))
        #expect(await caller.options("example.rooms", field: field,
            context: Samples.context(options: ["rooms": ["Ada", "Grace"]])) == .success([
                ChoiceOption(id: "ada", label: "Ada", icon: "x-office-calendar"),
                ChoiceOption(id: "grace", label: "Grace", icon: "x-office-calendar"),
            ]))
        guard case .failure(nil, let detail) = await caller.options("example.rooms", field: field,
            context: Samples.context())
        else {
            Issue.record("example.rooms without rooms should fail with the default message")
            return
        }
        #expect(detail.contains("no rooms"))
    }
}
