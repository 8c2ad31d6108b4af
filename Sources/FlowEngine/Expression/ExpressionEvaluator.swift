import FlowKit

/// Evaluates a type-checked expression. Total: every expression has a value
/// for every set of answers, and the cost is bounded.
///
/// - An answer not given is `nothing`, except a yes/no value, which is
///   false. Arithmetic with nothing is nothing; concatenation reads it as
///   the empty text; `count` and `length` as 0; `==` is true only between
///   two nothings; `<`, `<=`, `>`, `>=` with nothing are false.
/// - Division by zero, a number of 10^15 or more (either sign), a date
///   outside the years 1 to 9999, a fractional number of days added to a
///   date, and a text longer than ``ExpressionLimits/maxTextBytes`` (an
///   answer, or a concatenation) have no value (nothing).
/// - Texts compare by code points, byte by byte, in linear time.
/// - Each node is evaluated at most once (`and`, `or` and `if` evaluate
///   less), and nothing loops: ``work`` counts one per node plus the bytes
///   of every text an operation reads or makes, so one evaluation's work is
///   at most nodes × (1 + the longest text involved).
struct ExpressionEvaluator {
    let today: CivilDate
    let limits: ExpressionLimits
    /// A field's value as the expression reads it.
    let value: (String) -> ExprValue
    /// The work done so far (see the type's documentation).
    private(set) var work = 0

    init(today: CivilDate, limits: ExpressionLimits = .default, value: @escaping (String) -> ExprValue) {
        self.today = today
        self.limits = limits
        self.value = value
    }

    /// The value of `expression`.
    mutating func evaluate(_ expression: Expression) -> ExprValue {
        evaluate(expression.root)
    }

    /// Whether `expression` (of type yes/no) holds.
    mutating func holds(_ expression: Expression) -> Bool {
        evaluate(expression.root) == .bool(true)
    }

    private mutating func evaluate(_ n: ExprNode) -> ExprValue {
        work += 1
        switch n.kind {
        case .number(let d): return .number(d)
        case .text(let s): return .text(s)
        case .bool(let b): return .bool(b)
        case .today: return .date(today)
        case .field(let id): return value(id)
        case .unary(.negate, let a):
            guard case .number(let x) = evaluate(a) else { return .nothing }
            return number(-x)
        case .unary(.not, let a):
            return .bool(evaluate(a) != .bool(true))
        case .binary(.and, let a, let b):
            return .bool(evaluate(a) == .bool(true) && evaluate(b) == .bool(true))
        case .binary(.or, let a, let b):
            return .bool(evaluate(a) == .bool(true) || evaluate(b) == .bool(true))
        case .binary(let op, let a, let b):
            return binary(op, evaluate(a), evaluate(b))
        case .call(.if, let args):
            return evaluate(args[0]) == .bool(true) ? evaluate(args[1]) : evaluate(args[2])
        case .call(.count, let args):
            guard case .list(let l) = evaluate(args[0]) else { return .number(0) }
            return .number(Double(l.count))
        case .call(.length, let args):
            guard case .text(let s) = evaluate(args[0]) else { return .number(0) }
            work += s.utf8.count
            return .number(Double(s.unicodeScalars.count))
        }
    }

    private mutating func binary(_ op: BinaryOperator, _ x: ExprValue, _ y: ExprValue) -> ExprValue {
        switch (op, x, y) {
        case (.add, .number(let a), .number(let b)): return number(a + b)
        case (.subtract, .number(let a), .number(let b)): return number(a - b)
        case (.multiply, .number(let a), .number(let b)): return number(a * b)
        case (.divide, .number(let a), .number(let b)): return b == 0 ? .nothing : number(a / b)
        case (.add, .date(let d), .number(let n)): return shift(d, by: n)
        case (.subtract, .date(let d), .number(let n)): return shift(d, by: -n)
        case (.subtract, .date(let a), .date(let b)): return .number(Double(a.days(since: b)))
        case (.add, .text, _), (.add, _, .text):
            return concatenate(x, y)
        case (.equal, _, _): return .bool(equal(x, y))
        case (.notEqual, _, _): return .bool(!equal(x, y))
        case (.less, _, _): return .bool(order(x, y).map { $0 < 0 } ?? false)
        case (.lessOrEqual, _, _): return .bool(order(x, y).map { $0 <= 0 } ?? false)
        case (.greater, _, _): return .bool(order(x, y).map { $0 > 0 } ?? false)
        case (.greaterOrEqual, _, _): return .bool(order(x, y).map { $0 >= 0 } ?? false)
        default: return .nothing
        }
    }

    /// A number within the bounds, or nothing (overflow and NaN have no value).
    private func number(_ d: Double) -> ExprValue {
        guard d.isFinite, abs(d) < limits.maxMagnitude else { return .nothing }
        return .number(d == 0 ? 0 : d)
    }

    private func shift(_ date: CivilDate, by days: Double) -> ExprValue {
        guard days.rounded() == days, abs(days) < 4_000_000, let d = date.adding(days: Int(days)) else { return .nothing }
        return .date(d)
    }

    /// Texts joined; nothing reads as the empty text. Too long: nothing.
    private mutating func concatenate(_ x: ExprValue, _ y: ExprValue) -> ExprValue {
        func text(_ v: ExprValue) -> String? {
            switch v {
            case .text(let s): return s
            case .nothing: return ""
            default: return nil
            }
        }
        guard let a = text(x), let b = text(y) else { return .nothing }
        let bytes = a.utf8.count + b.utf8.count
        guard bytes <= limits.maxTextBytes else { return .nothing }
        work += bytes
        return .text(a + b)
    }

    /// Texts are equal when their characters are, code point by code point
    /// (no normalization: a linear comparison of their UTF-8 bytes).
    private mutating func equal(_ x: ExprValue, _ y: ExprValue) -> Bool {
        guard case .text(let a) = x, case .text(let b) = y else { return x == y }
        work += min(a.utf8.count, b.utf8.count)
        return a.utf8.elementsEqual(b.utf8)
    }

    /// -1, 0 or 1 for two numbers, dates or texts; nil otherwise.
    private mutating func order(_ x: ExprValue, _ y: ExprValue) -> Int? {
        switch (x, y) {
        case (.number(let a), .number(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.date(let a), .date(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.text(let a), .text(let b)):
            // By code points ("09:30" < "12:00"), not by a language's
            // collation: UTF-8 bytes sort as their code points do.
            work += min(a.utf8.count, b.utf8.count)
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : (a.utf8.elementsEqual(b.utf8) ? 0 : 1)
        default: return nil
        }
    }
}
