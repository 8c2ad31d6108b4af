import FlowKit
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
