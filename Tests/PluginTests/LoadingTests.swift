import FlowEngine
import FlowKit
import Foundation
import PluginHost
import PluginTestSupport
import Testing

@Suite("Shipped plugins load")
struct LoadingTests {
    @Test("every shipped plugin loads through PluginLoader with its fixed capability names")
    func allLoad() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try Shipped.load(in: temp)
        #expect(report.registry.records.count == 5)
        for record in report.registry.records {
            #expect(record.status == .loaded, "\(record.path): \(record.error ?? "")")
            #expect(record.version == "1.0")
        }
        let expected: Set<CapabilityID> = [
            .init(kind: .submitAction, name: "flowd.spool"),
            .init(kind: .submitAction, name: "flowd.command"),
            .init(kind: .submitAction, name: "flowd.webhook"),
            .init(kind: .fieldValidator, name: "flowd.hostname"),
            .init(kind: .fieldValidator, name: "flowd.username-available"),
            .init(kind: .fieldValidator, name: "flowd.date-window"),
            .init(kind: .optionsProvider, name: "flowd.weekdays"),
            .init(kind: .optionsProvider, name: "flowd.time-slots"),
            .init(kind: .prefillProvider, name: "flowd.real-name"),
        ]
        #expect(report.registry.catalog == expected)
        #expect(Set(report.registry.records.map(\.name)) == [
            "flowd.spool", "flowd.command", "flowd.webhook", "flowd.validators", "flowd.providers",
        ])
    }
}

@Suite("Shipped plugins declare their options")
struct ShippedOptionTests {
    /// The repository's `flows/` directory.
    static let exampleFlows = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("flows")

    @Test("every shipped capability declares its options, as docs/plugins.md lists them")
    func declarations() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try Shipped.load(in: temp)
        let declared = report.registry.declaredOptions.mapValues { $0.map { "\($0.name):\($0.type.rawValue)\($0.required ? "!" : "")" } }
        #expect(
            declared == [
                "flowd.spool": ["directory:string", "includeSecure:bool"],
                "flowd.command": ["path:string!", "args:strings", "timeoutSeconds:number", "includeSecure:bool"],
                "flowd.webhook": ["url:string!", "timeoutSeconds:number", "headers:string-map", "includeSecure:bool"],
                "flowd.hostname": ["requireDomain:bool"],
                "flowd.username-available": ["checkGroups:bool"],
                "flowd.date-window": ["minDays:integer", "maxDays:integer"],
                "flowd.weekdays": ["count:integer"],
                "flowd.time-slots": ["start:string", "end:string", "minutes:integer"],
                "flowd.real-name": [],
            ])
    }

    @Test("the example flows load against the shipped plugins' declarations; a misspelt option does not")
    func exampleFlowsFit() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try Shipped.load(in: temp)
        let catalog = CapabilityCatalog(
            report.registry.catalog.map { ($0.kind, $0.name) }, declaredOptions: report.registry.declaredOptions)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.exampleFlows.path).filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for file in files {
            let bytes = Array(try Data(contentsOf: Self.exampleFlows.appendingPathComponent(file)))
            #expect(throws: Never.self, "\(file)") { _ = try FlowLoader.load(bytes, fileName: file, capabilities: catalog) }
        }
        let misspelt = """
            {"format": 1, "id": "t", "title": "T", "steps": [{"id": "a", "title": "A", "kind": "content"}],
             "submit": {"action": "flowd.command", "options": {"path": "/bin/true", "timeoutSecond": 5}}}
            """
        do {
            _ = try FlowLoader.load(misspelt, fileName: "t.json", capabilities: catalog)
            Issue.record("a misspelt option loaded")
        } catch {
            #expect(error.description == #"t.json: submit.options.timeoutSecond: flowd.command has no option "timeoutSecond" (did you mean "timeoutSeconds"?)"#)
        }
    }
}
