import Testing

@testable import FlowEngine

@Suite struct JSONParserTests {
    let limits = JSONParser.Limits(maxDepth: 32, maxStringBytes: 1024)

    func parse(_ s: String) throws(JSONParser.SyntaxError) -> JSONNode {
        try JSONParser.parse(Array(s.utf8), limits: limits).root
    }

    func syntaxError(_ s: String, limits: JSONParser.Limits? = nil) -> JSONParser.SyntaxError? {
        do {
            _ = try JSONParser.parse(Array(s.utf8), limits: limits ?? self.limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func keepsMemberOrderAndTellsIntegersFromFractions() throws {
        let node = try parse(#"{"b": 1, "a": 2.5, "c": [true, null, "x"], "d": -0, "e": 1e2}"#)
        guard case .object(let members) = node else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["b", "a", "c", "d", "e"])
        #expect(members[0].value == .integer(1))
        #expect(members[1].value == .number(2.5))
        #expect(members[2].value == .array([.bool(true), .null, .string("x")]))
        #expect(members[3].value == .integer(0))
        #expect(members[4].value == .number(100))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
    }

    @Test func reportsLineAndColumnOfSyntaxErrors() throws {
        let e = try #require(syntaxError("{\n  \"a\": 1,\n  \"b\" 2\n}"))
        #expect(e.line == 3)
        #expect(e.column == 7)
        #expect(e.message.contains("expected ':'"))
    }

    @Test(arguments: [
        ("", "empty"), ("{", "end of file"), ("[1,]", "expected a value"), ("{\"a\":1,}", "member name"),
        ("01", "leading zero"), ("1.", "after '.'"), ("-", "digit after '-'"), ("\"abc", "never closed"),
        ("\"\\x\"", "unknown escape"), ("\"\\ud800\"", "surrogate"), ("\"\\udc00\"", "lone low surrogate"),
        ("\"\\u0000\"", "U+0000"), ("[1] 2", "after the end"), ("nul", "expected a value"), ("1e999", "out of range"),
        ("\"a\u{01}b\"", "control character"),
    ])
    func refusesMalformedInput(input: String, fragment: String) throws {
        let e = try #require(syntaxError(input), "accepted \(input)")
        #expect(e.message.contains(fragment), "\(e.message)")
    }

    @Test func refusesInvalidUTF8() throws {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(bytes, limits: limits) }
    }

    @Test func skipsAByteOrderMark() throws {
        let node = try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8), limits: limits).root
        #expect(node == .array([.integer(1)]))
    }

    @Test func boundsNestingWithoutRecursingIntoHostileInput() throws {
        // 100,000 open brackets: refused at the depth limit, no stack overflow.
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let e = try #require(syntaxError(deep))
        #expect(e.message.contains("deeper than 32"))
        #expect(e.column == 33)
        let nestedObjects = String(repeating: "{\"a\":", count: 50_000) + "1" + String(repeating: "}", count: 50_000)
        #expect(syntaxError(nestedObjects)?.message.contains("deeper") == true)
    }

    @Test func boundsStringAndNumberLength() throws {
        let long = "\"" + String(repeating: "x", count: 2000) + "\""
        #expect(syntaxError(long)?.message.contains("longer than 1024 bytes") == true)
        let number = String(repeating: "1", count: 100)
        #expect(syntaxError(number)?.message.contains("longer than 64") == true)
    }

    @Test func reportsDuplicateKeysWithTheirPath() throws {
        let r = try JSONParser.parse(Array(#"{"a": {"x": 1, "x": 2}, "a": 3}"#.utf8), limits: limits)
        #expect(r.duplicateKeys.map(\.description) == ["a.x", "a"])
    }

    @Test func pathsQuoteKeysThatAreNotIdentifiers() {
        let p = JSONPath.root / "title" / "pt-BR"
        #expect(p.description == "title[\"pt-BR\"]")
        #expect((JSONPath.root / "steps" / 2 / "fields" / 0).description == "steps[2].fields[0]")
        #expect(JSONPath.root.description == "$")
    }

    @Test func quotingEscapesControlCharactersAndTruncates() {
        #expect(quoted("a\u{1B}[31m") == "\"a\\u001b[31m\"")
        #expect(quoted(String(repeating: "z", count: 200)).count < 90)
    }

    @Test func fingerprintIgnoresWhitespaceButNotContent() throws {
        let a = try parse(#"{"a": [1, "x"]}"#)
        let b = try parse("{ \"a\" :\n [ 1 , \"\\u0078\" ] }")
        let c = try parse(#"{"a": [1, "y"]}"#)
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.fingerprint != c.fingerprint)
        #expect(a.fingerprint.count == 16)
    }
}
