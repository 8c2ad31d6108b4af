/// The bounds a `pattern` must stay within.
package struct PatternLimits: Sendable, Hashable {
    /// The longest pattern, in Unicode scalars.
    package var maxLength = 1000
    /// The largest compiled program, in instructions. `{m,n}` copies its
    /// operand, so this is what bounds `(a{1000}){1000}`.
    package var maxProgramSize = 10_000
    /// The largest count in `{m}`, `{m,}` or `{m,n}`.
    package var maxRepeat = 1000
    /// The deepest nesting of groups.
    package var maxGroupDepth = 32
    /// The most steps one match may take. A match costs at most
    /// (value length + 1) × program size steps, so a pattern checks values of
    /// at most `maxMatchWork / programSize` characters (see
    /// ``PatternRegex/maxInputLength``): a few milliseconds in the worst case.
    package var maxMatchWork = 250_000

    /// The bounds flow files get: the documented defaults (change single
    /// members of a copy as needed).
    package static let `default` = PatternLimits()
}

/// Why a pattern does not compile, and where.
package struct PatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The position of the offending character, counting Unicode scalars from 1.
    package let position: Int
    /// What is wrong there.
    package let message: String

    /// `at position N: message`.
    package var description: String { "at position \(position): \(message)" }
}

/// A regular expression for the `pattern` rule, matched in linear time.
///
/// Swift's `Regex` backtracks, so `(a+)+$` on a long input can take forever,
/// and flow files are only semi-trusted. This is a small dialect compiled to a
/// Thompson NFA and run as a Pike VM over Unicode scalars: a match costs at most
/// (input length × program size) steps, whatever the pattern.
///
/// The dialect (the whole value must match; see docs/flow-format.md):
/// literals; `.` (any scalar but line feed); classes `[a-z]`, `[^…]`;
/// escapes `\d \w \s \D \W \S` (ASCII digits, `[A-Za-z0-9_]`, ASCII space),
/// `\n \t \r \f \v` and escaped metacharacters; groups `( )` and `(?: )`;
/// alternation `|`; quantifiers `* + ? {m} {m,} {m,n}`. A leading `^` and a
/// trailing `$` are accepted and change nothing. Backreferences, lookaround,
/// lazy quantifiers and flags are refused with an error.
package struct PatternRegex: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The pattern as written.
    package let source: String
    private let program: [Instruction]
    private let sets: [ScalarSet]
    /// The longest value this pattern checks, in Unicode scalars.
    ///
    /// Longer values never match. The validator reports them as too long
    /// (the pattern acts as an implicit `maxLength`), and the linter refuses a
    /// `maxLength` above it.
    package let maxInputLength: Int

    /// Compiles `source`, or throws a ``PatternError`` that names the position.
    package init(_ source: String, limits: PatternLimits = .default) throws(PatternError) {
        let scalars = Array(source.unicodeScalars)
        if scalars.count > limits.maxLength {
            throw PatternError(
                position: limits.maxLength + 1,
                message: "the pattern is longer than \(limits.maxLength) characters")
        }
        var parser = PatternParser(scalars: scalars, limits: limits)
        let tree = try parser.parseWhole()
        var compiler = PatternCompiler()
        compiler.emit(tree)
        compiler.code.append(.match)
        self.source = source
        self.program = compiler.code
        self.sets = compiler.sets
        self.maxInputLength = max(1, limits.maxMatchWork / max(1, compiler.code.count) - 1)
    }

    /// The number of instructions the pattern compiled to.
    package var programSize: Int { program.count }

    /// True when the whole of `text` matches. A text longer than
    /// ``maxInputLength`` scalars never matches (the work stays bounded).
    package func matches(_ text: String) -> Bool {
        var length = 0
        for _ in text.unicodeScalars {
            length += 1
            if length > maxInputLength { return false }
        }
        var current = SparseSet(capacity: program.count)
        var next = SparseSet(capacity: program.count)
        var stack: [Int] = []
        addThread(0, to: &current, stack: &stack)
        for scalar in text.unicodeScalars {
            if current.isEmpty { return false }
            next.removeAll()
            for pc in current.members {
                let advance: Bool
                switch program[pc] {
                case .scalar(let v): advance = v == scalar.value
                case .any: advance = scalar != "\n"
                case .set(let i): advance = sets[i].contains(scalar)
                case .split, .jump, .match: advance = false
                }
                if advance { addThread(pc + 1, to: &next, stack: &stack) }
            }
            swap(&current, &next)
        }
        return current.members.contains { program[$0] == .match }
    }

    /// Adds `pc` and everything reachable from it without consuming input.
    /// An explicit stack, so a long chain of jumps cannot overflow the call
    /// stack; the set membership check ends empty loops such as `(a?)*`.
    private func addThread(_ pc: Int, to list: inout SparseSet, stack: inout [Int]) {
        stack.append(pc)
        while let p = stack.popLast() {
            if !list.insert(p) { continue }
            switch program[p] {
            case .jump(let target): stack.append(target)
            case .split(let a, let b):
                stack.append(b)
                stack.append(a)
            default: break
            }
        }
    }

    /// `PatternRegex("…")`: the source, not the compiled program.
    package var description: String { "PatternRegex(\(quoted(source, limit: 200)))" }

    /// Shows the source only.
    package var customMirror: Mirror { Mirror(self, children: ["source": source]) }

    /// Two patterns are equal when written the same.
    package static func == (lhs: PatternRegex, rhs: PatternRegex) -> Bool { lhs.source == rhs.source }
    /// Hashes the source.
    package func hash(into hasher: inout Hasher) { hasher.combine(source) }
}

// MARK: - Program

enum Instruction: Sendable, Hashable {
    case scalar(UInt32)
    case any
    case set(Int)
    case split(Int, Int)
    case jump(Int)
    case match
}

/// A bracket class, or one of `\d \w \s` and their negations.
struct ScalarSet: Sendable, Hashable {
    enum Builtin: Sendable, Hashable {
        case digit, word, space

        func contains(_ s: Unicode.Scalar) -> Bool {
            switch self {
            case .digit: return isASCIIDigit(s)
            case .word: return isASCIIDigit(s) || isASCIILetter(s) || s == "_"
            case .space: return s == " " || (s.value >= 0x09 && s.value <= 0x0D)
            }
        }
    }

    var ranges: [ClosedRange<UInt32>] = []
    var builtins: [Builtin] = []
    var negatedBuiltins: [Builtin] = []
    var negated = false

    func contains(_ s: Unicode.Scalar) -> Bool {
        var hit = ranges.contains { $0.contains(s.value) }
        if !hit { hit = builtins.contains { $0.contains(s) } }
        if !hit { hit = negatedBuiltins.contains { !$0.contains(s) } }
        return hit != negated
    }
}

/// A sparse set of program counters: O(1) insert, membership and clear.
private struct SparseSet {
    private(set) var members: [Int] = []
    private var index: [Int]

    init(capacity: Int) {
        index = Array(repeating: 0, count: capacity)
        members.reserveCapacity(capacity)
    }

    var isEmpty: Bool { members.isEmpty }

    /// Inserts `v`; false when it was already there.
    mutating func insert(_ v: Int) -> Bool {
        let i = index[v]
        if i < members.count && members[i] == v { return false }
        index[v] = members.count
        members.append(v)
        return true
    }

    mutating func removeAll() { members.removeAll(keepingCapacity: true) }
}

// MARK: - Syntax tree

indirect enum PatternNode: Sendable {
    case empty
    case scalar(Unicode.Scalar)
    case any
    case set(ScalarSet)
    case concat([PatternNode])
    case alternation([PatternNode])
    /// `max == nil` is unbounded.
    case repetition(PatternNode, min: Int, max: Int?)
}

// MARK: - Parser

private struct PatternParser {
    let scalars: [Unicode.Scalar]
    let limits: PatternLimits
    var i = 0
    var end: Int
    var depth = 0

    init(scalars: [Unicode.Scalar], limits: PatternLimits) {
        self.scalars = scalars
        self.limits = limits
        self.end = scalars.count
    }

    mutating func parseWhole() throws(PatternError) -> PatternNode {
        if scalars.first == "^" { i = 1 }
        if end > i, scalars[end - 1] == "$" {
            // `\$` at the end is a literal dollar: count the backslashes before it.
            var backslashes = 0
            var j = end - 2
            while j >= i, scalars[j] == "\\" {
                backslashes += 1
                j -= 1
            }
            if backslashes % 2 == 0 { end -= 1 }
        }
        let (node, _) = try parseAlternation()
        if i < end {
            throw fail(at: i, "unmatched ')'")
        }
        return node
    }

    private func peek() -> Unicode.Scalar? { i < end ? scalars[i] : nil }

    private func fail(at index: Int, _ message: String) -> PatternError {
        PatternError(position: index + 1, message: message)
    }

    /// Returns the node and its compiled size.
    private mutating func parseAlternation() throws(PatternError) -> (PatternNode, Int) {
        let (first, firstSize) = try parseConcat()
        var branches = [first]
        var size = firstSize
        while peek() == "|" {
            i += 1
            let (b, bSize) = try parseConcat()
            branches.append(b)
            size = try bounded(size.addingReportingOverflow(bSize + 2), at: i)
        }
        return (branches.count == 1 ? first : .alternation(branches), size)
    }

    private mutating func parseConcat() throws(PatternError) -> (PatternNode, Int) {
        var items: [PatternNode] = []
        var size = 0
        while let c = peek(), c != "|", c != ")" {
            let (item, itemSize) = try parseQuantified()
            items.append(item)
            size = try bounded(size.addingReportingOverflow(itemSize), at: i)
        }
        switch items.count {
        case 0: return (.empty, 0)
        case 1: return (items[0], size)
        default: return (.concat(items), size)
        }
    }

    private mutating func parseQuantified() throws(PatternError) -> (PatternNode, Int) {
        let (atom, atomSize) = try parseAtom()
        guard let c = peek(), c == "*" || c == "+" || c == "?" || c == "{" else { return (atom, atomSize) }
        let quantifierAt = i
        let min: Int
        let max: Int?
        switch c {
        case "*": (min, max) = (0, nil); i += 1
        case "+": (min, max) = (1, nil); i += 1
        case "?": (min, max) = (0, 1); i += 1
        default: (min, max) = try parseCounts()
        }
        if let next = peek() {
            if next == "?" { throw fail(at: i, "lazy quantifiers ('\(c)?') are not supported") }
            if next == "*" || next == "+" || next == "{" {
                throw fail(at: i, "a quantifier cannot follow another quantifier; use a group: (…)\(next)")
            }
        }
        // Size of the expansion: `min` copies, then optional copies, or a loop:
        // `x*` is split + x + jump; with min ≥ 1 the last copy loops back
        // itself (x+ is x + split), so nested `+` do not double in size.
        let copies = try bounded(atomSize.multipliedReportingOverflow(by: min), at: quantifierAt)
        let tail: Int
        if let max {
            tail = try bounded((atomSize + 1).multipliedReportingOverflow(by: max - min), at: quantifierAt)
        } else {
            tail = min == 0 ? atomSize + 2 : 1
        }
        let size = try bounded(copies.addingReportingOverflow(tail), at: quantifierAt)
        return (.repetition(atom, min: min, max: max), size)
    }

    private mutating func parseCounts() throws(PatternError) -> (Int, Int?) {
        let open = i
        i += 1
        guard let m = parseNumber() else {
            throw fail(at: open, "expected a count after '{' (write \\{ for a literal brace)")
        }
        var n: Int? = m
        if peek() == "," {
            i += 1
            n = parseNumber()
        }
        guard peek() == "}" else { throw fail(at: i, "expected '}' to close the count opened at position \(open + 1)") }
        i += 1
        if m > limits.maxRepeat || (n ?? 0) > limits.maxRepeat {
            throw fail(at: open, "a repetition count over \(limits.maxRepeat) is not allowed")
        }
        if let n, n < m { throw fail(at: open, "{\(m),\(n)} needs the first count to be at most the second") }
        return (m, n)
    }

    private mutating func parseNumber() -> Int? {
        var value = 0
        var digits = 0
        while let c = peek(), isASCIIDigit(c) {
            if digits < 9 { value = value * 10 + Int(c.value - 0x30) } else { value = Int.max / 2 }
            digits += 1
            i += 1
        }
        return digits == 0 ? nil : value
    }

    private mutating func parseAtom() throws(PatternError) -> (PatternNode, Int) {
        guard let c = peek() else { return (.empty, 0) }
        let at = i
        switch c {
        case "(":
            i += 1
            if peek() == "?" {
                if i + 1 < end, scalars[i + 1] == ":" {
                    i += 2
                } else {
                    throw fail(at: at, "only '(?:' groups are supported (no lookaround, named groups or flags)")
                }
            }
            depth += 1
            if depth > limits.maxGroupDepth {
                throw fail(at: at, "groups are nested deeper than \(limits.maxGroupDepth) levels")
            }
            let inner = try parseAlternation()
            guard peek() == ")" else { throw fail(at: at, "missing ')' for the '(' at position \(at + 1)") }
            i += 1
            depth -= 1
            return inner
        case "[":
            return (.set(try parseClass()), 1)
        case ".":
            i += 1
            return (.any, 1)
        case "\\":
            switch try parseEscape() {
            case .scalar(let s): return (.scalar(s), 1)
            case .builtin(let b, let negated):
                var set = ScalarSet()
                if negated { set.negatedBuiltins = [b] } else { set.builtins = [b] }
                return (.set(set), 1)
            }
        case "*", "+", "?":
            throw fail(at: at, "'\(c)' has nothing to repeat (write \\\(c) for a literal)")
        case "{":
            throw fail(at: at, "'{' has nothing to repeat (write \\{ for a literal brace)")
        case "}", "]":
            throw fail(at: at, "unmatched '\(c)' (write \\\(c) for a literal)")
        case "^", "$":
            throw fail(at: at, "'\(c)' is only allowed at the very start ('^') or end ('$'); the whole value is matched anyway")
        default:
            i += 1
            return (.scalar(c), 1)
        }
    }

    private enum Escape {
        case scalar(Unicode.Scalar)
        case builtin(ScalarSet.Builtin, negated: Bool)
    }

    private static let builtinEscapes: [Unicode.Scalar: (ScalarSet.Builtin, negated: Bool)] = [
        "d": (.digit, false), "D": (.digit, true), "w": (.word, false), "W": (.word, true), "s": (.space, false),
        "S": (.space, true),
    ]
    private static let controlEscapes: [Unicode.Scalar: Unicode.Scalar] = [
        "n": "\n", "t": "\t", "r": "\r", "f": "\u{0C}", "v": "\u{0B}",
    ]

    private mutating func parseEscape() throws(PatternError) -> Escape {
        let at = i
        i += 1
        guard let c = peek() else { throw fail(at: at, "a pattern cannot end with a single '\\'") }
        i += 1
        if let (builtin, negated) = Self.builtinEscapes[c] { return .builtin(builtin, negated: negated) }
        if let control = Self.controlEscapes[c] { return .scalar(control) }
        switch c {
        case "\\", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "^", "$", "/", "-":
            return .scalar(c)
        case "1", "2", "3", "4", "5", "6", "7", "8", "9":
            throw fail(at: at, "backreferences are not supported")
        case "b", "B":
            throw fail(at: at, "word boundaries are not supported")
        default:
            throw fail(at: at, "unknown escape '\\\(c)'")
        }
    }

    private mutating func parseClass() throws(PatternError) -> ScalarSet {
        let open = i
        i += 1
        var set = ScalarSet()
        if peek() == "^" {
            set.negated = true
            i += 1
        }
        var count = 0
        while true {
            guard let c = peek() else { throw fail(at: open, "missing ']' for the '[' at position \(open + 1)") }
            if c == "]" {
                if count == 0 { throw fail(at: i, "an empty class '[]' matches nothing (write \\] for a literal)") }
                i += 1
                return set
            }
            count += 1
            let itemAt = i
            let low: Unicode.Scalar
            if c == "\\" {
                switch try parseEscape() {
                case .builtin(let b, let negated):
                    if negated { set.negatedBuiltins.append(b) } else { set.builtins.append(b) }
                    continue
                case .scalar(let s): low = s
                }
            } else {
                low = c
                i += 1
            }
            // A range `a-z`; a '-' before ']' is a literal.
            if peek() == "-", i + 1 < end, scalars[i + 1] != "]" {
                i += 1
                let high: Unicode.Scalar
                if peek() == "\\" {
                    let escapeAt = i
                    switch try parseEscape() {
                    case .builtin: throw fail(at: escapeAt, "a class escape cannot end a range")
                    case .scalar(let s): high = s
                    }
                } else if let h = peek() {
                    high = h
                    i += 1
                } else {
                    throw fail(at: open, "missing ']' for the '[' at position \(open + 1)")
                }
                guard low.value <= high.value else {
                    throw fail(at: itemAt, "the range \(Character(low))-\(Character(high)) is out of order")
                }
                set.ranges.append(low.value...high.value)
            } else {
                set.ranges.append(low.value...low.value)
            }
        }
    }

    /// A program size worked out by `…ReportingOverflow`, unless it overflowed
    /// or is over the bound.
    private func bounded(_ size: (partialValue: Int, overflow: Bool), at index: Int) throws(PatternError) -> Int {
        guard size.overflow || size.partialValue > limits.maxProgramSize else { return size.partialValue }
        throw fail(at: index, "the pattern is too large once its repetitions are expanded (over \(limits.maxProgramSize) instructions); use smaller counts")
    }
}

// MARK: - Compiler

private struct PatternCompiler {
    var code: [Instruction] = []
    var sets: [ScalarSet] = []

    mutating func emit(_ node: PatternNode) {
        switch node {
        case .empty:
            break
        case .scalar(let s):
            code.append(.scalar(s.value))
        case .any:
            code.append(.any)
        case .set(let set):
            sets.append(set)
            code.append(.set(sets.count - 1))
        case .concat(let items):
            for item in items { emit(item) }
        case .alternation(let branches):
            var exits: [Int] = []
            for (n, branch) in branches.enumerated() {
                if n == branches.count - 1 {
                    emit(branch)
                } else {
                    let split = code.count
                    code.append(.split(split + 1, -1))
                    emit(branch)
                    exits.append(code.count)
                    code.append(.jump(-1))
                    code[split] = .split(split + 1, code.count)
                }
            }
            for e in exits { code[e] = .jump(code.count) }
        case .repetition(let inner, let min, nil) where min > 0:
            for _ in 0..<(min - 1) { emit(inner) }
            let loop = code.count
            emit(inner)
            code.append(.split(loop, code.count + 1))
        case .repetition(let inner, let min, let max):
            for _ in 0..<min { emit(inner) }
            if let max {
                for _ in min..<max {
                    let split = code.count
                    code.append(.split(split + 1, -1))
                    emit(inner)
                    code[split] = .split(split + 1, code.count)
                }
            } else {
                let loop = code.count
                code.append(.split(loop + 1, -1))
                emit(inner)
                code.append(.jump(loop))
                code[loop] = .split(loop + 1, code.count)
            }
        }
    }
}
