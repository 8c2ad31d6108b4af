import FlowKit

// What format 2 adds to pass 1: piped texts, expressions, levels, and the
// check that a format 1 file does not use them (to an older flowd they
// would mean something else, or nothing). References to fields are recorded
// for pass 2, which checks them against the whole flow.
extension FlowBuilder {
    /// True in a format 2 file; otherwise reports that `what` needs it.
    mutating func requireFormat2(_ path: JSONPath, _ what: String) -> Bool {
        guard format < 2 else { return true }
        problem(path, "\(what) needs \"format\": 2 (this file is format \(format))")
        return false
    }

    /// A human text answers may be piped into: in format 2 its `{field}`
    /// placeholders are parsed here and their fields checked in pass 2.
    ///
    /// - Parameter step: the index of the step the text belongs to, whose
    ///   earlier steps it may read; nil for Review and the success message,
    ///   which come after every step.
    mutating func piped(_ node: JSONNode, _ path: JSONPath, _ what: String, step: Int?) -> LocalizedText? {
        guard let text = reader.localized(node, path, what) else { return nil }
        guard format >= 2 else { return text }
        if let plain = text.plain {
            placeholders(plain, path, what, step: step)
        } else {
            for t in text.translations { placeholders(t.text, path / t.locale, what, step: step) }
        }
        return text
    }

    private mutating func placeholders(_ text: String, _ path: JSONPath, _ what: String, step: Int?) {
        if Piping.mayPipe(text) { references.pipes = true }
        do {
            for p in try Piping.placeholders(in: text) {
                references.pipeRefs.append(.init(step: step, path: path, field: p.field, position: p.position))
            }
        } catch {
            problem(path, "\(what) has a malformed placeholder \(error.description)")
        }
    }

    /// An expression: parsed within the bounds here, type-checked in pass 2.
    mutating func expression(_ node: JSONNode, _ path: JSONPath) -> Expression? {
        guard let source = reader.string(node, path, "an expression") else { return nil }
        do {
            let e = try ExpressionParser.parse(source, limits: limits.expression)
            expressionNodes += e.nodeCount
            return e
        } catch {
            problem(path, "invalid expression \(quoted(source)) \(error.description)")
            return nil
        }
    }

    /// `level` on a rule or validator: `error` (the default) or `warning`.
    mutating func level(_ o: ObjectView, _ path: JSONPath) -> IssueLevel {
        guard let n = o["level"], requireFormat2(path / "level", "\"level\"") else { return .error }
        guard let s = reader.string(n, path / "level", "the level") else { return .error }
        guard let level = IssueLevel(rawValue: s) else {
            problem(path / "level", "unknown level \(quoted(s)) (expected error or warning)")
            return .error
        }
        return level
    }

    /// The keys of a `computed` field: its `expr`, and how its value reads.
    mutating func computedKeys(
        _ o: ObjectView, _ path: JSONPath, type: FieldType?, id: String?, step: Int, index: Int,
        into f: inout FieldDefinition
    ) {
        guard type == .computed else { return }
        if let n = o["expr"] {
            f.expression = expression(n, path / "expr")
            if let e = f.expression, let id {
                references.exprRefs.append(.init(
                    step: step, fieldLimit: index, path: path / "expr", expression: e, computedField: id))
            }
        } else {
            missing(o, "expr", "the expression that computes the value, such as \"pageCount * 120\"")
        }
        if let n = o["display"], let text = reader.localized(n, path / "display", "the display") {
            let translations = text.plain.map { [($0, path / "display")] }
                ?? text.translations.map { ($0.text, path / "display" / $0.locale) }
            for (t, p) in translations where Strings.placeholders(in: t) != ["value"] {
                problem(p, "the display must contain {value} once, and no other placeholder (as in \"{value} €\")")
            }
            f.display = text
        }
        f.decimals = o["decimals"].flatMap { reader.integer($0, path / "decimals", 0...3) }
    }
}
