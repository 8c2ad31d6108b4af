import FlowKit
import Testing

/// `DeclaresOptions`: what a capability says it takes, and what flowd finds
/// wrong with a flow's options against it.
@Suite struct PluginOptionDeclarations {
    struct Declaring: SubmitAction, DeclaresOptions {
        static let declaredOptions = [
            PluginOption(name: "url", type: .string, required: true),
            PluginOption(name: "timeoutSeconds", type: .number),
            PluginOption(name: "count", type: .integer),
            PluginOption(name: "args", type: .strings),
            PluginOption(name: "headers", type: .stringMap),
            PluginOption(name: "verbose", type: .bool),
        ]
        func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt { SubmitReceipt() }
    }

    struct Silent: SubmitAction {
        func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt { SubmitReceipt() }
    }

    @Test("a capability's declaration is read through the registration; one that declares nothing has none")
    func readThroughCapability() {
        #expect(Capability.submitAction("x.declaring", Declaring()).declaredOptions == Declaring.declaredOptions)
        #expect(Capability.submitAction("x.silent", Silent()).declaredOptions == nil)
    }

    @Test("options that fit have no problems; null counts as absent")
    func fitting() {
        let options: [String: JSONValue] = [
            "url": "https://example.org", "timeoutSeconds": 2.5, "count": 3, "args": ["-v"],
            "headers": ["A": "b"], "verbose": true,
        ]
        #expect(PluginOption.problems(in: options, declared: Declaring.declaredOptions).isEmpty)
        #expect(PluginOption.problems(in: ["url": "u", "count": .null], declared: Declaring.declaredOptions).isEmpty)
    }

    @Test("unknown keys, wrong types and missing required options are found, in that order")
    func problems() {
        let found = PluginOption.problems(
            in: ["urll": "x", "count": 2.5, "args": ["a", 1], "headers": ["A": 1], "verbose": "yes"],
            declared: Declaring.declaredOptions)
        let byName = Dictionary(uniqueKeysWithValues: Declaring.declaredOptions.map { ($0.name, $0) })
        #expect(
            found == [
                .wrongType(byName["args"]!), .wrongType(byName["count"]!), .wrongType(byName["headers"]!),
                .unknown(key: "urll"), .wrongType(byName["verbose"]!), .missing(byName["url"]!),
            ])
        #expect(PluginOptionProblem.unknown(key: "urll").description == "unknown option \"urll\"")
        #expect(PluginOptionProblem.missing(byName["url"]!).description == "option \"url\" is required (a string)")
        #expect(PluginOptionProblem.wrongType(byName["count"]!).description == "option \"count\" must be a whole number")
        #expect(PluginOption.problems(in: ["url": .null], declared: Declaring.declaredOptions) == [.missing(byName["url"]!)])
        #expect(PluginOption.problems(in: ["any": 1], declared: []) == [.unknown(key: "any")])
    }

    @Test("each type accepts its own JSON and nothing else")
    func types() {
        let samples: [JSONValue] = ["s", ["s"], 1.5, 2, true, ["k": "v"], ["k": 1], .null, [1]]
        func accepted(_ type: PluginOptionType) -> [Int] { samples.indices.filter { type.accepts(samples[$0]) } }
        #expect(accepted(.string) == [0])
        #expect(accepted(.strings) == [1])
        #expect(accepted(.number) == [2, 3])
        #expect(accepted(.integer) == [3])
        #expect(accepted(.bool) == [4])
        #expect(accepted(.stringMap) == [5])
        #expect(accepted(.object) == [5, 6])
        #expect(accepted(.any) == Array(samples.indices))
    }

    @Test("a declaration with a bad or repeated name, or too many options, is a problem")
    func declarations() {
        #expect(PluginOption.declarationProblem(in: Declaring.declaredOptions) == nil)
        #expect(PluginOption.declarationProblem(in: []) == nil)
        let twice = [PluginOption(name: "a", type: .bool), PluginOption(name: "a", type: .string)]
        #expect(PluginOption.declarationProblem(in: twice) == "declares the option \"a\" twice")
        for bad in ["", "has space", "dot.ted", "\u{1b}[2J", String(repeating: "x", count: 65), "é"] {
            #expect(PluginOption.declarationProblem(in: [PluginOption(name: bad, type: .bool)])?.contains("invalid option name") == true, "\(bad)")
        }
        let many = (0...PluginOption.maximumDeclared).map { PluginOption(name: "o\($0)", type: .bool) }
        #expect(PluginOption.declarationProblem(in: many)?.contains("at most 64") == true)
    }
}
