import Testing

@testable import FlowEngine

@Suite struct PatternRegexTests {
    func matches(_ pattern: String, _ text: String) throws -> Bool {
        try PatternRegex(pattern).matches(text)
    }

    @Test(arguments: [
        ("abc", "abc", true), ("abc", "abcd", false), ("abc", "xabc", false),
        ("a.c", "abc", true), ("a.c", "a\nc", false), ("a.c", "aéc", true),
        ("[a-c]+", "abcabc", true), ("[a-c]+", "abd", false), ("[^0-9]*", "abc", true), ("[^0-9]*", "a1", false),
        ("\\d{3}", "123", true), ("\\d{3}", "12", false), ("\\D+", "ab", true), ("\\w+", "a_1", true),
        ("\\W", "-", true), ("\\s", "\t", true), ("\\S+", "a b", false), ("[\\d\\s]+", "1 2", true),
        ("[\\D]", "x", true), ("[\\D]", "5", false),
        ("(ab)+", "ababab", true), ("(?:ab)+", "aba", false), ("a|b|c", "b", true), ("ab|cd", "abd", false),
        ("colou?r", "color", true), ("colou?r", "colour", true), ("a*", "", true), ("a+", "", false),
        ("a{2,3}", "aa", true), ("a{2,3}", "aaaa", false), ("a{2,}", "aaaaa", true), ("a{0}", "", true),
        ("^abc$", "abc", true), ("\\$", "$", true), ("a\\$", "a$", true), ("[.]", ".", true), ("\\.", "x", false),
        ("x[-a]", "x-", true), ("x[a-]", "x-", true), ("[\\]]", "]", true), ("\\(\\)", "()", true),
        ("é+", "ééé", true), ("[α-ω]+", "λόγος", false), ("[α-ω]+", "λογος", true), ("👍", "👍", true),
        ("(a|ab)(c|bcd)(d*)", "abcd", true), ("((a*)*b)", "aaab", true), ("(|a)+", "aaa", true),
    ])
    func matchesTheWholeValue(pattern: String, text: String, expected: Bool) throws {
        #expect(try matches(pattern, text) == expected, "\(pattern) on \(text)")
    }

    @Test(arguments: [
        ("(a", 1, "missing ')'"), ("a)", 2, "unmatched ')'"), ("[a", 1, "missing ']'"), ("[]", 2, "empty class"),
        ("*a", 1, "nothing to repeat"), ("a**", 3, "cannot follow another quantifier"), ("a*?", 3, "lazy"),
        ("a{", 2, "expected a count"), ("a{2", 4, "expected '}'"), ("a{3,2}", 2, "at most the second"),
        ("a{1001}", 2, "over 1000"), ("\\1", 1, "backreferences"), ("\\q", 1, "unknown escape"), ("a\\", 2, "single '\\'"),
        ("(?=a)", 1, "only '(?:'"), ("[z-a]", 2, "out of order"), ("a^b", 2, "only allowed at the very start"),
        ("a$b", 2, "only allowed"), ("}", 1, "unmatched '}'"), ("[a-\\d]", 4, "class escape cannot end"),
        ("\\b", 1, "word boundaries"),
    ])
    func compileErrorsNameThePosition(pattern: String, position: Int, fragment: String) throws {
        do {
            _ = try PatternRegex(pattern)
            Issue.record("compiled \(pattern)")
        } catch {
            #expect(error.position == position, "\(pattern): \(error)")
            #expect(error.message.contains(fragment), "\(pattern): \(error)")
            #expect(error.description.hasPrefix("at position \(position): "))
        }
    }

    @Test func boundsPatternLengthProgramSizeAndNesting() throws {
        #expect(throws: PatternError.self) { try PatternRegex(String(repeating: "a", count: 1001)) }
        // Nested counts multiply: refused at compile time instead of exploding.
        do {
            _ = try PatternRegex("(a{1000}){1000}")
            Issue.record("compiled a huge program")
        } catch {
            #expect(error.message.contains("too large"))
        }
        #expect(throws: PatternError.self) { try PatternRegex(String(repeating: "(", count: 40) + String(repeating: ")", count: 40)) }
        let small = try PatternRegex("(ab){3}")
        #expect(small.programSize < 20)
        let custom = PatternLimits(maxLength: 5, maxProgramSize: 100, maxRepeat: 10, maxGroupDepth: 2)
        #expect(throws: PatternError.self) { try PatternRegex("a{11}", limits: custom) }
        #expect(throws: PatternError.self) { try PatternRegex("((()))", limits: custom) }
    }

    /// Patterns that make a backtracking engine take exponential time finish
    /// here; there is no timing assertion, only that the calls return.
    @Test func pathologicalPatternsFinish() throws {
        let long = String(repeating: "a", count: 20_000) + "b"
        #expect(try matches("(a+)+", long) == false)
        #expect(try matches("(a|a)*c", long) == false)
        #expect(try matches("(a*)*", String(repeating: "a", count: 20_000)) == true)
        #expect(try matches("(a|aa)+$", String(repeating: "a", count: 5_000)) == true)
        #expect(try matches("(x+x+)+y", String(repeating: "x", count: 5_000)) == false)
        let counted = try PatternRegex("(a?){100}a{100}")
        #expect(counted.matches(String(repeating: "a", count: 100)))
        #expect(counted.matches(String(repeating: "a", count: 200)))
        #expect(!counted.matches(String(repeating: "a", count: 201)))
    }

    /// The work of one match is bounded: a big program checks only short values.
    @Test func bigProgramsCheckOnlyShortValues() throws {
        let big = try PatternRegex("((a?){990})*")
        #expect(big.programSize > 1900)
        #expect(big.maxInputLength == PatternLimits.default.maxMatchWork / big.programSize - 1)
        #expect(big.matches(String(repeating: "a", count: big.maxInputLength)))
        #expect(!big.matches(String(repeating: "a", count: big.maxInputLength + 1)))
        let small = try PatternRegex("[a-z]+")
        #expect(small.maxInputLength > 40_000)
        // Nested `+` stay small.
        #expect(try PatternRegex("(((a+)+)+)+").programSize < 10)
    }

    @Test func equalityFollowsTheSource() throws {
        #expect(try PatternRegex("a+") == PatternRegex("a+"))
        #expect(try PatternRegex("a+") != PatternRegex("a*"))
    }
}
