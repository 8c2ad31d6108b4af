/// Type-checks an expression when its flow loads, so that a session never
/// meets a wrong type: every operator and function gets the operands it
/// takes, and every field it reads exists and may be read from where the
/// expression is.
///
/// | operands | operators and functions | result |
/// |---|---|---|
/// | number, number | `+ - * /` | number |
/// | text, text | `+` (concatenation) | text |
/// | date, number | `+ -` (days) | date |
/// | date, date | `-` (days between) | number |
/// | two of the same type (not a list) | `== !=` | yes/no |
/// | two numbers, dates or texts | `< <= > >=` | yes/no |
/// | yes/no | `and or not` | yes/no |
/// | yes/no, T, T | `if` | T |
/// | list | `count` | number |
/// | text | `length` | number |
struct ExpressionChecker {
    /// What reading a field gives.
    enum FieldRead {
        /// The field may be read and has this type.
        case type(ExprType)
        /// No field has this id; `suggestion` is a likely intended one.
        case unknown(suggestion: String?)
        /// The field exists but cannot be read here; the sentence says why.
        case refused(String)
    }

    /// What each field id reads as.
    let read: (String) -> FieldRead

    /// The expression's type, or the first problem, with its position.
    func type(of expression: Expression) throws(ExpressionError) -> ExprType {
        try type(expression.root)
    }

    private func type(_ n: ExprNode) throws(ExpressionError) -> ExprType {
        switch n.kind {
        case .number: return .number
        case .text: return .text
        case .bool: return .bool
        case .today: return .date
        case .field(let id):
            switch read(id) {
            case .type(let t): return t
            case .refused(let why): throw ExpressionError(position: n.position, message: why)
            case .unknown(let suggestion):
                var message = "unknown field \(quoted(id))"
                if let suggestion { message += " (did you mean \(quoted(suggestion))?)" }
                if id.contains("-") { message += "; to subtract, put spaces around '-'" }
                if ExpressionParser.keywords.contains(id) { message += "; \(quoted(id)) is a reserved word" }
                throw ExpressionError(position: n.position, message: message)
            }
        case .unary(.negate, let a):
            try expect(a, .number, "'-'")
            return .number
        case .unary(.not, let a):
            try expect(a, .bool, "\"not\"")
            return .bool
        case .binary(let op, let a, let b):
            return try binary(op, a, b, at: n.position)
        case .call(let function, let args):
            switch function {
            case .if:
                try expect(args[0], .bool, "the condition of if()")
                let then = try type(args[1])
                let otherwise = try type(args[2])
                guard then == otherwise else {
                    throw ExpressionError(position: args[2].position, message: "if() gives \(then.described) when the condition holds and \(otherwise.described) when it does not; both must have the same type")
                }
                return then
            case .count:
                try expect(args[0], .list, "count() (a multichoice field)")
                return .number
            case .length:
                try expect(args[0], .text, "length()")
                return .number
            }
        }
    }

    private func binary(_ op: BinaryOperator, _ a: ExprNode, _ b: ExprNode, at position: Int) throws(ExpressionError) -> ExprType {
        let x = try type(a)
        let y = try type(b)
        func wrong(_ takes: String) -> ExpressionError {
            ExpressionError(position: position, message: "\(quoted(op.rawValue)) takes \(takes), not \(x.described) and \(y.described)")
        }
        switch op {
        case .add:
            switch (x, y) {
            case (.number, .number): return .number
            case (.text, .text): return .text
            case (.date, .number): return .date
            default: throw wrong("two numbers, two texts or a date and a number of days")
            }
        case .subtract:
            switch (x, y) {
            case (.number, .number): return .number
            case (.date, .date): return .number
            case (.date, .number): return .date
            default: throw wrong("two numbers, two dates or a date and a number of days")
            }
        case .multiply, .divide:
            guard x == .number, y == .number else { throw wrong("two numbers") }
            return .number
        case .equal, .notEqual:
            guard x == y, x != .list else {
                if x == .list || y == .list {
                    throw ExpressionError(position: position, message: "a multichoice field cannot be compared with \(quoted(op.rawValue)); use count() or a field condition ({\"field\": …, \"equals\": …})")
                }
                throw wrong("two values of the same type")
            }
            return .bool
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard x == y, x == .number || x == .date || x == .text else { throw wrong("two numbers, two dates or two texts") }
            return .bool
        case .and, .or:
            guard x == .bool, y == .bool else { throw wrong("two yes/no values") }
            return .bool
        }
    }

    private func expect(_ n: ExprNode, _ wanted: ExprType, _ what: String) throws(ExpressionError) {
        let t = try type(n)
        guard t == wanted else {
            throw ExpressionError(position: n.position, message: "\(what) takes \(wanted.described), not \(t.described)")
        }
    }
}
