import FlowKit

/// The bounds on expressions, so that no flow file can make one expensive to
/// load or to evaluate (documented in docs/flow-format.md, "Expressions").
///
/// An evaluation visits each node at most once and has no loops, so its
/// work is at most the node count plus the bytes of the texts it touches
/// (``ExpressionEvaluator/work``); these bounds cap both.
package struct ExpressionLimits: Sendable, Hashable {
    /// The longest expression, in UTF-8 bytes.
    package var maxSourceBytes = 1024
    /// The most nodes in one expression (a literal, a field, an operator, a
    /// function call each count one).
    package var maxNodes = 128
    /// The deepest nesting: the height of the expression's tree.
    package var maxDepth = 24
    /// The most nodes of all the expressions of one flow together: what one
    /// page of a session can evaluate at most.
    package var maxNodesPerFlow = 2000
    /// The most digits in a number literal; with no exponent this keeps
    /// every literal below 10^15, where doubles still count in whole units.
    package var maxLiteralDigits = 15
    /// Numbers from 10^15 on (either sign) have no value: overflow is defined.
    package var maxMagnitude = 1e15
    /// The longest text an expression reads or makes, in UTF-8 bytes; a
    /// longer answer or concatenation has no value.
    package var maxTextBytes = 4096

    /// The documented defaults.
    package init() {}

    /// The bounds flow files get.
    package static let `default` = ExpressionLimits()
}

/// The type of an expression's value, checked when the flow loads.
package enum ExprType: String, Sendable, Hashable, CaseIterable {
    case number, text, bool, date, list

    /// For messages: "a number", "a yes/no value".
    var described: String {
        switch self {
        case .number: return "a number"
        case .text: return "a text"
        case .bool: return "a yes/no value"
        case .date: return "a date"
        case .list: return "a list of options"
        }
    }

    /// The type an expression reads from a field of `type` (nil: it cannot
    /// read that field; a secure field, or a computed one, whose type the
    /// linter works out from its expression).
    init?(reading type: FieldType) {
        switch type {
        case .text, .multiline, .email, .choice, .time: self = .text
        case .number: self = .number
        case .date: self = .date
        case .toggle: self = .bool
        case .multichoice: self = .list
        case .secure, .computed: return nil
        }
    }
}

/// A value while an expression is evaluated. `nothing` is an answer not
/// given (or a result with no value: a division by zero, an overflow).
package enum ExprValue: Sendable, Hashable {
    case nothing
    case number(Double)
    case text(String)
    case bool(Bool)
    case date(CivilDate)
    case list([String])

    /// An answer as an expression of type `type` reads it. A yes/no value
    /// that is not given reads as false, so conditions are two-valued; a
    /// date that does not parse (people type them) reads as nothing.
    init(_ answer: AnswerValue?, as type: ExprType) {
        guard let answer, !isBlank(answer) else {
            self = type == .bool ? .bool(false) : .nothing
            return
        }
        switch (type, answer) {
        case (.number, _): self = answer.doubleValue.map(ExprValue.number) ?? .nothing
        case (.bool, .bool(let b)): self = .bool(b)
        case (.date, .text(let s)): self = CivilDate(iso: s).map(ExprValue.date) ?? .nothing
        case (.text, .text(let s)):
            // Bounded work: a longer answer (only when the daemon's string
            // limit is raised) is no value to an expression.
            self = s.utf8.count <= ExpressionLimits.default.maxTextBytes ? .text(s) : .nothing
        case (.list, .list(let l)): self = .list(l)
        default: self = type == .bool ? .bool(false) : .nothing
        }
    }

    /// A number rounded to `decimals` places (half away from zero), as a
    /// computed field keeps it; other values as they are.
    func rounded(decimals: Int) -> ExprValue {
        guard case .number(let d) = self else { return self }
        let scale = powerOfTen(decimals)
        let r = (d * scale).rounded() / scale
        return .number(r == 0 ? 0 : r)
    }

    /// The value as an answer (what a computed field submits): whole
    /// numbers as integers, a date as `YYYY-MM-DD`; nil for nothing.
    var answer: AnswerValue? {
        switch self {
        case .nothing: return nil
        case .number(let d):
            if d.rounded() == d, abs(d) < 9.0e15 { return .integer(Int64(d)) }
            return .number(d)
        case .text(let s): return .text(s)
        case .bool(let b): return .bool(b)
        case .date(let d): return .text(d.description)
        case .list(let l): return .list(l)
        }
    }
}

/// 10^n for a small n (the places of a computed number).
func powerOfTen(_ n: Int) -> Double {
    var p = 1.0
    for _ in 0..<max(0, n) { p *= 10 }
    return p
}

/// An operator with one operand.
enum UnaryOperator: String, Sendable, Hashable {
    case negate = "-"
    case not
}

/// An operator with two operands.
enum BinaryOperator: String, Sendable, Hashable {
    case add = "+", subtract = "-", multiply = "*", divide = "/"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case and, or
}

/// The functions an expression may call.
enum ExprFunction: String, Sendable, Hashable, CaseIterable {
    /// `if(condition, then, else)`.
    case `if`
    /// `count(multichoice)`: how many options are chosen.
    case count
    /// `length(text)`: in Unicode scalars, as `minLength` counts.
    case length

    var arity: Int { self == .if ? 3 : 1 }
}

/// One node of a parsed expression.
struct ExprNode: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case number(Double)
        case text(String)
        case bool(Bool)
        /// The day the expression is evaluated, from the engine's clock.
        case today
        case field(String)
        indirect case unary(UnaryOperator, ExprNode)
        indirect case binary(BinaryOperator, ExprNode, ExprNode)
        indirect case call(ExprFunction, [ExprNode])
    }

    let kind: Kind
    /// Where the node starts, counting characters (Unicode scalars) from 1.
    let position: Int
}

/// A parsed, bounded expression (see ``ExpressionParser``): what a
/// `computed` field's `expr` and an `{"expr": …}` condition hold.
package struct Expression: Sendable, Hashable, CustomStringConvertible {
    /// The expression as written.
    package let source: String
    let root: ExprNode
    /// Its size, counted against ``ExpressionLimits/maxNodesPerFlow``.
    let nodeCount: Int
    /// The fields it reads, each once, in order of appearance, with where
    /// each first appears.
    let fieldReferences: [(id: String, position: Int)]

    /// The ids of the fields it reads, each once.
    var fieldIDs: [String] { fieldReferences.map(\.id) }

    package var description: String { source }

    package static func == (a: Expression, b: Expression) -> Bool { a.source == b.source && a.root == b.root }

    package func hash(into hasher: inout Hasher) { hasher.combine(source) }
}

/// Why an expression does not parse or type-check, and where.
package struct ExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where, counting characters (Unicode scalars) from 1.
    package let position: Int
    /// What is wrong there.
    package let message: String

    /// `at position N: message`.
    package var description: String { "at position \(position): \(message)" }
}
