/// Parses the expression language of flow files (docs/flow-format.md,
/// "Expressions") into a tree, within ``ExpressionLimits``.
///
/// ```
/// expression := or
/// or         := and ("or" and)*
/// and        := not ("and" not)*
/// not        := "not" not | comparison
/// comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
/// sum        := product (("+" | "-") product)*
/// product    := unary (("*" | "/") unary)*
/// unary      := "-" unary | primary
/// primary    := number | string | "true" | "false" | "today" | field
///             | ("if" | "count" | "length") "(" expression ("," expression)* ")"
///             | "(" expression ")"
/// ```
///
/// A field is named by its id (letters, digits, `_` and `-`): `a-b` is the
/// field `a-b`, and `a - b` a subtraction. A function's name is one only
/// before `(`: `count` alone is a field called `count`. Every bound is checked while
/// parsing, before the parser recurses further: nesting (parentheses, calls,
/// `not`, unary minus) by ``ExpressionLimits/maxDepth``, so the parser's
/// stack is bounded whatever the input; a chain `a + b + c …` does not nest,
/// and its length is bounded by ``ExpressionLimits/maxNodes``.
struct ExpressionParser {
    private enum Token: Equatable {
        case number(Double)
        case text(String)
        case name(String)
        case symbol(String)
        case end
    }

    private let limits: ExpressionLimits
    private var tokens: [(token: Token, position: Int)] = []
    private var index = 0
    private var nodes = 0
    private var references: [(id: String, position: Int)] = []

    /// Reserved words; a field with such an id cannot be read in an
    /// expression. A function's name (`if`, `count`, `length`) is one only
    /// before `(`, so a field may be called `count`.
    static let keywords: Set<String> = ["and", "or", "not", "true", "false", "today"]

    private init(limits: ExpressionLimits) {
        self.limits = limits
    }

    /// Parses `source`, or throws an error naming the position.
    static func parse(_ source: String, limits: ExpressionLimits = .default) throws(ExpressionError) -> Expression {
        guard source.utf8.count <= limits.maxSourceBytes else {
            throw ExpressionError(position: 1, message: "the expression is \(source.utf8.count) bytes, over the limit of \(limits.maxSourceBytes)")
        }
        var parser = ExpressionParser(limits: limits)
        try parser.tokenize(Array(source.unicodeScalars))
        let root = try parser.expression(depth: 1)
        guard case .end = parser.current else {
            throw parser.unexpected("an operator or the end of the expression")
        }
        return Expression(source: source, root: root, nodeCount: parser.nodes, fieldReferences: parser.references)
    }

    // MARK: Tokens

    private mutating func tokenize(_ s: [Unicode.Scalar]) throws(ExpressionError) {
        var i = 0
        while i < s.count {
            let c = s[i]
            let position = i + 1
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                i += 1
            } else if isASCIIDigit(c) {
                var digits = 0
                var j = i
                var text = ""
                var seenPoint = false
                while j < s.count, isASCIIDigit(s[j]) || (s[j] == "." && !seenPoint && j + 1 < s.count && isASCIIDigit(s[j + 1])) {
                    if s[j] == "." { seenPoint = true } else { digits += 1 }
                    text.unicodeScalars.append(s[j])
                    j += 1
                }
                guard digits <= limits.maxLiteralDigits else {
                    throw ExpressionError(position: position, message: "a number of \(digits) digits is over the limit of \(limits.maxLiteralDigits)")
                }
                if j < s.count, isASCIILetter(s[j]) || s[j] == "_" {
                    throw ExpressionError(position: j + 1, message: "a number cannot run into a name (exponents like 1e5 are not supported)")
                }
                guard let value = Double(text) else {
                    throw ExpressionError(position: position, message: "\(quoted(text)) is not a number")
                }
                tokens.append((.number(value), position))
                i = j
            } else if c == "\"" {
                var j = i + 1
                var text = ""
                var closed = false
                while j < s.count {
                    if s[j] == "\"" {
                        closed = true
                        break
                    }
                    if s[j] == "\\" {
                        guard j + 1 < s.count, s[j + 1] == "\"" || s[j + 1] == "\\" else {
                            throw ExpressionError(position: j + 1, message: "only \\\" and \\\\ are escapes in a string")
                        }
                        j += 1
                    }
                    text.unicodeScalars.append(s[j])
                    j += 1
                }
                guard closed else { throw ExpressionError(position: position, message: "the string has no closing '\"'") }
                tokens.append((.text(text), position))
                i = j + 1
            } else if isASCIILetter(c) {
                var j = i
                var name = ""
                while j < s.count, isASCIILetter(s[j]) || isASCIIDigit(s[j]) || s[j] == "_" || s[j] == "-" {
                    name.unicodeScalars.append(s[j])
                    j += 1
                }
                tokens.append((.name(name), position))
                i = j
            } else {
                let pair = i + 1 < s.count ? String(String.UnicodeScalarView([c, s[i + 1]])) : ""
                if ["==", "!=", "<=", ">="].contains(pair) {
                    tokens.append((.symbol(pair), position))
                    i += 2
                } else if "+-*/()<>,".unicodeScalars.contains(c) {
                    tokens.append((.symbol(String(c)), position))
                    i += 1
                } else if c == "=" {
                    throw ExpressionError(position: position, message: "'=' alone is not an operator (compare with '==')")
                } else if c == "!" {
                    throw ExpressionError(position: position, message: "'!' alone is not an operator (write \"not\", or '!=' to compare)")
                } else if c == "&" || c == "|" {
                    throw ExpressionError(position: position, message: "\(quoted(String(c))) is not an operator (write \"and\" or \"or\")")
                } else if c == "'" {
                    throw ExpressionError(position: position, message: "strings are written in double quotes")
                } else {
                    throw ExpressionError(position: position, message: "unexpected character \(quoted(String(c)))")
                }
            }
        }
        tokens.append((.end, s.count + 1))
    }

    private var current: Token { tokens[index].token }
    private var position: Int { tokens[index].position }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func isSymbol(_ s: String) -> Bool { current == .symbol(s) }
    private func isName(_ s: String) -> Bool { current == .name(s) }

    private func unexpected(_ expected: String) -> ExpressionError {
        let found: String
        switch current {
        case .end: found = "the end of the expression"
        case .number: found = "a number"
        case .text: found = "a string"
        case .name(let n): found = quoted(n)
        case .symbol(let s): found = quoted(s)
        }
        return ExpressionError(position: position, message: "expected \(expected), found \(found)")
    }

    // MARK: Nodes

    /// A new node, counted against the bound.
    private mutating func node(_ kind: ExprNode.Kind, at position: Int) throws(ExpressionError) -> ExprNode {
        nodes += 1
        guard nodes <= limits.maxNodes else {
            throw ExpressionError(position: position, message: "the expression has more than \(limits.maxNodes) parts (numbers, fields, operators, calls)")
        }
        return ExprNode(kind: kind, position: position)
    }

    /// Refuses nesting beyond the bound before going deeper.
    private func enter(_ depth: Int) throws(ExpressionError) {
        guard depth <= limits.maxDepth else {
            throw ExpressionError(position: position, message: "the expression nests deeper than \(limits.maxDepth) levels")
        }
    }

    /// One level of left-associative operators: `operand (op operand)*`.
    /// A chain does not nest, so it loops instead of recursing.
    private mutating func chain(
        _ match: (Token) -> BinaryOperator?, depth: Int,
        _ operand: (inout ExpressionParser, Int) throws(ExpressionError) -> ExprNode
    ) throws(ExpressionError) -> ExprNode {
        var lhs = try operand(&self, depth)
        while let op = match(current) {
            let at = position
            advance()
            let rhs = try operand(&self, depth)
            lhs = try node(.binary(op, lhs, rhs), at: at)
        }
        return lhs
    }

    private mutating func expression(depth: Int) throws(ExpressionError) -> ExprNode {
        try enter(depth)
        return try chain({ $0 == .name("or") ? .or : nil }, depth: depth) { (p, d) throws(ExpressionError) in
            try p.chain({ $0 == .name("and") ? .and : nil }, depth: d) { (p, d) throws(ExpressionError) in
                try p.negation(depth: d)
            }
        }
    }

    private mutating func negation(depth: Int) throws(ExpressionError) -> ExprNode {
        guard isName("not") else { return try comparison(depth: depth) }
        let at = position
        advance()
        try enter(depth + 1)
        return try node(.unary(.not, try negation(depth: depth + 1)), at: at)
    }

    private mutating func comparison(depth: Int) throws(ExpressionError) -> ExprNode {
        let lhs = try sum(depth: depth)
        let operators: [BinaryOperator] = [.equal, .notEqual, .lessOrEqual, .greaterOrEqual, .less, .greater]
        guard case .symbol(let s) = current, let op = operators.first(where: { $0.rawValue == s }) else { return lhs }
        let at = position
        advance()
        let rhs = try sum(depth: depth)
        let compared = try node(.binary(op, lhs, rhs), at: at)
        if case .symbol(let next) = current, operators.contains(where: { $0.rawValue == next }) {
            throw ExpressionError(position: position, message: "comparisons do not chain: write \"a < b and b < c\"")
        }
        return compared
    }

    private mutating func sum(depth: Int) throws(ExpressionError) -> ExprNode {
        try chain({ $0 == .symbol("+") ? .add : ($0 == .symbol("-") ? .subtract : nil) }, depth: depth) {
            (p, d) throws(ExpressionError) in
            try p.chain({ $0 == .symbol("*") ? .multiply : ($0 == .symbol("/") ? .divide : nil) }, depth: d) {
                (p, d) throws(ExpressionError) in try p.unary(depth: d)
            }
        }
    }

    private mutating func unary(depth: Int) throws(ExpressionError) -> ExprNode {
        guard isSymbol("-") else { return try primary(depth: depth) }
        let at = position
        advance()
        try enter(depth + 1)
        return try node(.unary(.negate, try unary(depth: depth + 1)), at: at)
    }

    private mutating func primary(depth: Int) throws(ExpressionError) -> ExprNode {
        let at = position
        switch current {
        case .number(let d):
            advance()
            return try node(.number(d), at: at)
        case .text(let s):
            advance()
            return try node(.text(s), at: at)
        case .symbol("("):
            advance()
            let inner = try expression(depth: depth + 1)
            guard isSymbol(")") else { throw unexpected("')'") }
            advance()
            return inner
        case .name(let name):
            advance()
            switch name {
            case "true", "false": return try node(.bool(name == "true"), at: at)
            case "today": return try node(.today, at: at)
            case "and", "or", "not":
                throw ExpressionError(position: at, message: "expected a value before \(quoted(name))")
            default:
                break
            }
            if let function = ExprFunction(rawValue: name), isSymbol("(") {
                return try call(function, at: at, depth: depth)
            }
            if isSymbol("(") {
                let known = ExprFunction.allCases.map(\.rawValue).joined(separator: ", ")
                throw ExpressionError(position: at, message: "unknown function \(quoted(name)) (expected one of \(known))")
            }
            if !references.contains(where: { $0.id == name }) { references.append((name, at)) }
            return try node(.field(name), at: at)
        default:
            throw unexpected("a value (a number, a string, a field, true, false, today or a function call)")
        }
    }

    private mutating func call(_ function: ExprFunction, at: Int, depth: Int) throws(ExpressionError) -> ExprNode {
        guard isSymbol("(") else { throw unexpected("'(' after \(quoted(function.rawValue))") }
        advance()
        try enter(depth + 1)
        var arguments: [ExprNode] = []
        while true {
            arguments.append(try expression(depth: depth + 1))
            guard arguments.count <= function.arity else {
                throw ExpressionError(position: arguments[arguments.count - 1].position, message: "\(function.rawValue)() takes \(function.arity) \(function.arity == 1 ? "argument" : "arguments")")
            }
            if isSymbol(",") {
                advance()
                continue
            }
            guard isSymbol(")") else { throw unexpected("',' or ')'") }
            advance()
            break
        }
        guard arguments.count == function.arity else {
            throw ExpressionError(position: at, message: "\(function.rawValue)() takes \(function.arity) \(function.arity == 1 ? "argument" : "arguments"), not \(arguments.count)")
        }
        return try node(.call(function, arguments), at: at)
    }
}
