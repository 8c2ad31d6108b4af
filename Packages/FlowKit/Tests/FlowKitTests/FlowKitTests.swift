import Testing
import FlowKit

@Suite struct AnswerValueCoding {
    @Test func roundTripsEveryCaseAsPlainJSON() throws {
        let cases: [AnswerValue] = [.text("héllo"), .list(["a", "b"]), .bool(true), .integer(-42), .number(2.5)]
        for value in cases {
            let encoded = try JSONCoder.encode(value)
            let decoded = try JSONCoder.decode(AnswerValue.self, from: encoded)
            #expect(decoded == value)
        }
    }

    @Test func emptinessClearsAnswers() {
        #expect(AnswerValue.text("").isEmpty)
        #expect(AnswerValue.list([]).isEmpty)
        #expect(!AnswerValue.bool(false).isEmpty)
        #expect(!AnswerValue.text(" ").isEmpty)
    }
}

@Suite struct Registration {
    struct Even: FieldValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
            guard let d = value.doubleValue else { return "not a number" }
            return Int(d) % 2 == 0 ? nil : "odd"
        }
    }

    @Test func exportAndTakeBackBalance() async throws {
        let reg = PluginRegistration(name: "t", version: "1", capabilities: [.fieldValidator("t.even", Even())])
        let p = reg.exportRetained()
        let back = PluginRegistration.takeExported(p)
        #expect(back === reg)
        #expect(back.abiVersion == FlowKitABI.version)
        #expect(back.capabilities.map(\.name) == ["t.even"])
        #expect(back.capabilities.map(\.kind) == [.fieldValidator])
    }
}
