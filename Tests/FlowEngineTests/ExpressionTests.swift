import FlowKit
import Testing

@testable import FlowEngine

/// The expression language: its grammar, its types (checked at load, with
/// JSON paths), its total semantics, and its bounds.
@Suite struct ExpressionTests {
    static let today = CivilDate(iso: "2025-06-15")!

    /// Parses and evaluates `source` with `fields` as the answers.
    static func eval(_ source: String, _ fields: [String: ExprValue] = [:]) throws -> ExprValue {
        let e = try ExpressionParser.parse(source)
        var evaluator = ExpressionEvaluator(today: today) { fields[$0] ?? .nothing }
        return evaluator.evaluate(e)
    }

    /// The parse error of `source`, as the lint message says it.
    static func parseError(_ source: String, limits: ExpressionLimits = .default) -> String? {
        do {
            _ = try ExpressionParser.parse(source, limits: limits)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("arithmetic, precedence, comparisons and logic")
    func arithmetic() throws {
        #expect(try Self.eval("1 + 2 * 3") == .number(7))
        #expect(try Self.eval("(1 + 2) * 3") == .number(9))
        #expect(try Self.eval("10 - 4 - 3") == .number(3), "left-associative")
        #expect(try Self.eval("7 / 2") == .number(3.5))
        #expect(try Self.eval("-3 + 5") == .number(2))
        #expect(try Self.eval("- - 4") == .number(4))
        #expect(try Self.eval("pageCount * 120", ["pageCount": .number(12)]) == .number(1440))
        #expect(try Self.eval("2 < 3 and 3 <= 3 and 4 > 3 and 4 >= 5") == .bool(false))
        #expect(try Self.eval("1 == 1 or 1 != 1") == .bool(true))
        #expect(try Self.eval("not 1 == 2") == .bool(true), "not binds looser than ==")
        #expect(try Self.eval("not true and false") == .bool(false))
        #expect(try Self.eval("\"a\" + \"b\" == \"ab\"") == .bool(true))
        #expect(try Self.eval("\"say \\\"hi\\\" \\\\ bye\"") == .text("say \"hi\" \\ bye"))
        #expect(try Self.eval("if(pages > 50, \"big\", \"small\")", ["pages": .number(51)]) == .text("big"))
        #expect(try Self.eval("if(pages > 50, \"big\", \"small\")") == .text("small"), "nothing > 50 is false")
        #expect(try Self.eval("count(features)", ["features": .list(["a", "b"])]) == .number(2))
        #expect(try Self.eval("length(name)", ["name": .text("Zoë 🇩🇪")]) == .number(6), "Unicode scalars, as minLength counts")
        #expect(try Self.eval("a-b", ["a-b": .number(5)]) == .number(5), "a-b is a field id; a - b subtracts")
        #expect(try Self.eval("a - b", ["a": .number(5), "b": .number(2)]) == .number(3))
        #expect(try Self.eval("count * 3 + count(count2)", ["count": .number(4), "count2": .list(["x"])]) == .number(13),
                "a function's name is a field's when no '(' follows")
    }

    @Test("dates: today from the engine's clock, differences in days, days added")
    func dates() throws {
        #expect(try Self.eval("today") == .date(Self.today))
        let handover = ExprValue.date(CivilDate(iso: "2025-06-20")!)
        let back = ExprValue.date(CivilDate(iso: "2025-07-04")!)
        #expect(try Self.eval("back - handover", ["back": back, "handover": handover]) == .number(14))
        #expect(try Self.eval("handover - today", ["handover": handover]) == .number(5))
        #expect(try Self.eval("today + 30") == .date(CivilDate(iso: "2025-07-15")!))
        #expect(try Self.eval("today - 1 < today") == .bool(true))
        #expect(try Self.eval("today + 0.5") == .nothing, "a fractional number of days has no value")
        #expect(try Self.eval("today + 99999999") == .nothing, "beyond the calendar: no value")
    }

    @Test("total: answers not given, division by zero, overflow and long texts have defined values")
    func total() throws {
        #expect(try Self.eval("pages * 120") == .nothing)
        #expect(try Self.eval("count(features) + length(name)") == .number(0))
        #expect(try Self.eval("first + \" \" + last", ["first": .text("Ada")]) == .text("Ada "))
        #expect(try Self.eval("1 / 0") == .nothing)
        #expect(try Self.eval("0 / 0") == .nothing)
        #expect(try Self.eval("999999999999999 * 999999999999999") == .nothing, "10^15 and more: no value")
        #expect(try Self.eval("999999999999999 + 1") == .nothing)
        #expect(try Self.eval("-999999999999999 - 1") == .nothing)
        #expect(try Self.eval("999999999999999") == .number(999_999_999_999_999))
        #expect(try Self.eval("pages == pages") == .bool(true), "two nothings are equal")
        #expect(try Self.eval("pages != 3") == .bool(true))
        #expect(try Self.eval("pages < 3 or pages >= 3") == .bool(false), "ordering with nothing is false")
        let long = String(repeating: "x", count: 3000)
        #expect(try Self.eval("t + t", ["t": .text(long)]) == .nothing, "over 4096 bytes: no value")
        #expect(try Self.eval("t + \"y\"", ["t": .text(long)]) == .text(long + "y"))
        #expect(ExprValue(.text(String(repeating: "x", count: 5000)), as: .text) == .nothing, "an answer over 4096 bytes")
        // Texts compare by code points, without normalization.
        #expect(try Self.eval("a == b", ["a": .text("é"), "b": .text("e\u{301}")]) == .bool(false))
        #expect(try Self.eval("a < b", ["a": .text("09:30"), "b": .text("12:00")]) == .bool(true))
        #expect(try Self.eval("a < b", ["a": .text("Z"), "b": .text("a")]) == .bool(true))
    }

    @Test("syntax errors name the position")
    func syntaxErrors() {
        #expect(Self.parseError("pages >") == "at position 8: expected a value (a number, a string, a field, true, false, today or a function call), found the end of the expression")
        #expect(Self.parseError("pages = 3") == "at position 7: '=' alone is not an operator (compare with '==')")
        #expect(Self.parseError("a && b")?.contains("write \"and\" or \"or\"") == true)
        #expect(Self.parseError("'x'")?.contains("double quotes") == true)
        #expect(Self.parseError("\"open") == "at position 1: the string has no closing '\"'")
        #expect(Self.parseError("1 < 2 < 3")?.contains("comparisons do not chain") == true)
        #expect(Self.parseError("max(1, 2)") == "at position 1: unknown function \"max\" (expected one of if, count, length)")
        #expect(Self.parseError("if(true, 1)") == "at position 1: if() takes 3 arguments, not 2")
        #expect(Self.parseError("length(a, b)")?.contains("length() takes 1 argument") == true)
        #expect(Self.parseError("(1 + 2") == "at position 7: expected ')', found the end of the expression")
        #expect(Self.parseError("1e5")?.contains("exponents") == true)
        #expect(Self.parseError("1 2") == "at position 3: expected an operator or the end of the expression, found a number")
        #expect(Self.parseError("a ^ b") == "at position 3: unexpected character \"^\"")
    }

    @Test("hostile expressions are refused at load: depth, nodes, size, huge numbers")
    func bounds() throws {
        let limits = ExpressionLimits.default
        let deep = String(repeating: "(", count: 25) + "1" + String(repeating: ")", count: 25)
        #expect(Self.parseError(deep)?.contains("nests deeper than 24 levels") == true)
        let okDepth = String(repeating: "(", count: 23) + "1" + String(repeating: ")", count: 23)
        #expect(Self.parseError(okDepth) == nil)
        // Thousands of levels: refused where the 25th opens, so the parser's stack stays small.
        let veryDeep = String(repeating: "(", count: 500) + "1" + String(repeating: ")", count: 500)
        #expect(Self.parseError(veryDeep)?.contains("nests deeper than 24 levels") == true)
        let nots = String(repeating: "not ", count: 200) + "true"
        #expect(Self.parseError(nots)?.contains("nests deeper") == true)
        let minus = String(repeating: "-", count: 30) + "1"
        #expect(Self.parseError(minus)?.contains("nests deeper") == true)
        let calls = String(repeating: "length(", count: 30) + "\"x\"" + String(repeating: ")", count: 30)
        #expect(Self.parseError(calls)?.contains("nests deeper") == true)
        // A long chain does not nest, but counts its nodes.
        let chain = (0..<64).map { _ in "1" }.joined(separator: "+")
        #expect(Self.parseError(chain) == nil, "127 nodes")
        let tooMany = (0..<65).map { _ in "1" }.joined(separator: "+")
        #expect(Self.parseError(tooMany)?.contains("more than 128 parts") == true)
        let big = String(repeating: "9", count: 16)
        #expect(Self.parseError(big) == "at position 1: a number of 16 digits is over the limit of 15")
        #expect(Self.parseError("0." + String(repeating: "1", count: 15)) != nil)
        let long = "\"" + String(repeating: "x", count: 1100) + "\""
        #expect(Self.parseError(long) == "at position 1: the expression is 1102 bytes, over the limit of \(limits.maxSourceBytes)")
        // The per-flow total.
        let expr = tooMany.split(separator: "+").prefix(60).joined(separator: "+")
        let fields = (0..<20).map { #"{"id": "c\#($0)", "type": "computed", "label": "C", "expr": "\#(expr)"}"# }
        let flow = #"{"format": 2, "id": "t", "title": "T", "steps": [{"id": "a", "title": "A", "fields": [\#(fields.joined(separator: ","))]}]}"#
        #expect(Fixture.problems(flow).contains { $0.path == "$" && $0.message == "the flow's expressions have 2380 parts in all, over the limit of 2000" })
    }

    /// The worst an evaluation can do, counted: each node once, plus the
    /// bytes of the texts it touches. A hostile expression within the bounds
    /// cannot do more than nodes × (1 + the longest text).
    @Test("the work of an evaluation is bounded by its nodes and its texts, whatever the expression")
    func workIsBounded() throws {
        let limits = ExpressionLimits.default
        let text = String(repeating: "é", count: 2048)  // 4096 bytes, the longest a concatenation keeps
        let worst: [String] = [
            // The most nodes, each as costly as it can be.
            (0..<42).map { _ in "length(t)" }.joined(separator: "+"),
            (0..<64).map { _ in "t" }.joined(separator: "+"),
            (0..<31).map { _ in "t == t" }.joined(separator: " and "),
            (0..<31).map { _ in "t < t" }.joined(separator: " or "),
            "if(" + (0..<30).map { _ in "t != t" }.joined(separator: " or ") + ", length(t + t), 0)",
        ]
        for source in worst {
            let e = try ExpressionParser.parse(source)
            #expect(e.nodeCount <= limits.maxNodes)
            var evaluator = ExpressionEvaluator(today: Self.today) { _ in .text(text) }
            _ = evaluator.evaluate(e)
            let bound = e.nodeCount * (1 + limits.maxTextBytes)
            #expect(evaluator.work <= bound, "\(source.prefix(40))…: \(evaluator.work) > \(bound)")
            #expect(evaluator.work > e.nodeCount, "the texts were read")
        }
    }

    @Test("types are checked at load, with the JSON path and the position")
    func typeErrorsAreLintErrors() {
        func problems(_ fields: String) -> [LintProblem] {
            Fixture.problems(#"""
                {"format": 2, "id": "t", "title": "T", "steps": [
                  {"id": "a", "title": "A", "fields": [
                    {"id": "service", "type": "choice", "label": "S", "options": [{"id": "web", "label": "Web"}]},
                    {"id": "pages", "type": "number", "label": "P"},
                    {"id": "features", "type": "multichoice", "label": "F", "options": [{"id": "x", "label": "X"}]},
                    {"id": "secret", "type": "secure", "label": "S"},
                    \#(fields)]},
                  {"id": "b", "title": "B", "fields": [{"id": "later", "type": "number", "label": "L"}]}]}
                """#)
        }
        func expect(_ field: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let found = problems(field)
            #expect(found.contains { $0.path == "steps[0].fields[4].expr" && $0.message.contains(message) },
                    "\(found.map(\.description))", sourceLocation: sourceLocation)
        }
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "pages * service"}"#,
               #"invalid expression "pages * service" at position 7: "*" takes two numbers, not a number and a text"#)
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "pags * 2"}"#,
               #"at position 1: unknown field "pags" (did you mean "pages"?)"#)
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "pages-2"}"#, "to subtract, put spaces around '-'")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "later + 1"}"#, "is on the later step \"b\"")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "length(secret)"}"#, "cannot read the secure field")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "c + 1"}"#, "a field cannot depend on itself")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "features == \"x\""}"#, "use count() or a field condition")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "if(pages, 1, 2)"}"#, "the condition of if() takes a yes/no value, not a number")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "if(pages > 1, 1, \"x\")"}"#, "both must have the same type")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "count(pages)"}"#, "count() (a multichoice field) takes a list of options, not a number")
        expect(#"{"id": "c", "type": "computed", "label": "C", "expr": "today + today"}"#, "two numbers, two texts or a date and a number of days")
        // A condition must be yes/no; an expression in a condition is checked the same way.
        let condition = Fixture.problems(#"""
            {"format": 2, "id": "t", "title": "T", "steps": [
              {"id": "a", "title": "A", "fields": [{"id": "pages", "type": "number", "label": "P"}],
               "next": [{"if": {"expr": "pages * 2"}, "goto": "b"}, {"goto": "b"}]},
              {"id": "b", "title": "B", "kind": "content"}]}
            """#)
        #expect(condition.map(\.description) == [#"bad.json: steps[0].next[0].if.expr: the expression "pages * 2" gives a number; a condition must give a yes/no value (compare it, as in "pageCount > 50")"#])
        // A computed field's type is known to what reads it later.
        let typed = Fixture.problems(#"""
            {"format": 2, "id": "t", "title": "T", "steps": [
              {"id": "a", "title": "A", "fields": [{"id": "pages", "type": "number", "label": "P"},
                {"id": "price", "type": "computed", "label": "P", "expr": "pages * 120"}],
               "next": [{"if": {"expr": "price > \"x\""}, "goto": "b"}, {"goto": "b"}]},
              {"id": "b", "title": "B", "kind": "content"}]}
            """#)
        #expect(typed.map(\.description) == [#"bad.json: steps[0].next[0].if.expr: invalid expression "price > \"x\"" at position 7: ">" takes two numbers, two dates or two texts, not a number and a text"#])
    }

    @Test("format 2 keys in a format 1 file are refused")
    func format1RefusesFormat2Keys() {
        let problems = Fixture.problems(#"""
            {"format": 1, "id": "t", "title": "T", "steps": [
              {"id": "a", "title": "A", "fields": [
                {"id": "pages", "type": "number", "label": "P"},
                {"id": "price", "type": "computed", "label": "C", "expr": "pages * 2"},
                {"id": "x", "type": "text", "label": "X", "visibleIf": {"expr": "pages > 1"}}],
               "rules": [{"requiredIf": "x", "if": {"field": "pages", "notEmpty": true}, "level": "warning"}]}]}
            """#)
        #expect(problems.contains { $0.path == "steps[0].fields[1].type" && $0.message == #"the type "computed" needs "format": 2 (this file is format 1)"# })
        #expect(problems.contains { $0.path == "steps[0].fields[2].visibleIf" && $0.message.contains("needs \"format\": 2") })
        #expect(problems.contains { $0.path == "steps[0].rules[0].level" && $0.message.contains("needs \"format\": 2") })
    }
}
