import FlowKit
import Testing

@testable import FlowEngine

/// The loader's check of a flow's plugin `options` against what the named
/// capability declares (`DeclaresOptions`).
@Suite struct PluginOptionLintTests {
    static let catalog = CapabilityCatalog(
        [
            (.submitAction, "x.run"), (.submitAction, "x.free"), (.fieldValidator, "x.check"),
            (.stepValidator, "x.pair"), (.optionsProvider, "x.slots"), (.prefillProvider, "x.name"),
        ],
        declaredOptions: [
            "x.run": [
                PluginOption(name: "path", type: .string, required: true),
                PluginOption(name: "timeoutSeconds", type: .number),
                PluginOption(name: "args", type: .strings),
            ],
            "x.check": [PluginOption(name: "strict", type: .bool)],
            "x.pair": [PluginOption(name: "fields", type: .strings, required: true)],
            "x.slots": [PluginOption(name: "count", type: .integer)],
            "x.name": [],
        ])

    static func submitting(_ action: String, _ options: String?) -> String {
        Fixture.wrap(
            #"{"id": "a", "title": "A", "kind": "content"}"#,
            extra: #""submit": {"action": "\#(action)""# + (options.map { #", "options": \#($0)"# } ?? "") + "}")
    }

    static func problems(_ json: String) -> [String] {
        Fixture.problems(json, capabilities: catalog).map(\.description)
    }

    @Test("options that fit the declaration load")
    func fitting() {
        #expect(Self.problems(Self.submitting("x.run", #"{"path": "/bin/true", "timeoutSeconds": 2.5, "args": ["-v"]}"#)) == [])
        #expect(Self.problems(Self.submitting("x.run", #"{"path": "/bin/true", "args": null}"#)) == [])
    }

    @Test("an unknown option is refused at its path, with a suggestion or the options there are")
    func unknown() {
        #expect(
            Self.problems(Self.submitting("x.run", #"{"path": "/bin/true", "timeoutSecond": 5}"#)) == [
                #"bad.json: submit.options.timeoutSecond: x.run has no option "timeoutSecond" (did you mean "timeoutSeconds"?)"#
            ])
        #expect(
            Self.problems(Self.submitting("x.run", #"{"path": "/bin/true", "shell": true}"#)) == [
                #"bad.json: submit.options.shell: x.run has no option "shell" (it takes path, timeoutSeconds, args)"#
            ])
    }

    @Test("a missing required option is refused at the options, or at the reference without any")
    func missing() {
        #expect(
            Self.problems(Self.submitting("x.run", #"{"args": []}"#)) == [
                #"bad.json: submit.options: x.run needs the option "path" (a string)"#
            ])
        #expect(Self.problems(Self.submitting("x.run", nil)) == [#"bad.json: submit: x.run needs the option "path" (a string)"#])
        #expect(
            Self.problems(Self.submitting("x.run", #"{"path": null}"#)) == [
                #"bad.json: submit.options: x.run needs the option "path" (a string)"#
            ])
    }

    @Test("a value of the wrong type is refused at its path, naming what was given")
    func wrongType() {
        #expect(
            Self.problems(Self.submitting("x.run", #"{"path": "/bin/true", "timeoutSeconds": "5", "args": ["a", 1]}"#)) == [
                #"bad.json: submit.options.args: x.run's option "args" must be an array of strings, got an array"#,
                #"bad.json: submit.options.timeoutSeconds: x.run's option "timeoutSeconds" must be a number, got a string"#,
            ])
    }

    @Test("validators, step rules and providers are checked where they name the capability")
    func everyReference() {
        let field = #"{"id": "x", "type": "text", "label": "X", "validators": [{"plugin": "x.check", "options": {"strikt": true}}]}"#
        #expect(
            Self.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)]}"#)) == [
                #"bad.json: steps[0].fields[0].validators[0].options.strikt: x.check has no option "strikt" (did you mean "strict"?)"#
            ])
        let rule = #"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X"}], "rules": [{"plugin": "x.pair"}]}"#
        #expect(Self.problems(Fixture.wrap(rule)) == [#"bad.json: steps[0].rules[0]: x.pair needs the option "fields" (an array of strings)"#])
        let provided = #"{"id": "c", "type": "choice", "label": "C", "optionsFrom": {"provider": "x.slots", "options": {"count": 2.5}}}"#
        #expect(
            Self.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(provided)]}"#)) == [
                #"bad.json: steps[0].fields[0].optionsFrom.options.count: x.slots's option "count" must be a whole number, got a number"#
            ])
        // A capability that declares no options takes none.
        let prefilled = #"{"id": "n", "type": "text", "label": "N", "prefill": {"provider": "x.name", "options": {"a": 1}}}"#
        #expect(
            Self.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(prefilled)]}"#)) == [
                #"bad.json: steps[0].fields[0].prefill.options.a: x.name has no option "a" (it takes none)"#
            ])
    }

    @Test("a capability that declares nothing, or a catalog that checks nothing, leaves the options alone")
    func undeclaredIsUnchecked() {
        let anything = #"{"whatever": [1, {"nested": true}], "path": 5}"#
        #expect(Self.problems(Self.submitting("x.free", anything)) == [])
        #expect(Fixture.problems(Self.submitting("x.run", anything), capabilities: .any).isEmpty)
        // A capability that is not there: only that is reported.
        #expect(
            Self.problems(Self.submitting("x.runn", anything)) == [
                #"bad.json: submit.action: no loaded plugin provides the submit action "x.runn" (did you mean "x.run"?)"#
            ])
    }
}
