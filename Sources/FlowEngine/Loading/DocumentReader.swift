import FlowKit

/// Collects lint problems, up to a bound.
struct LintSink {
    let file: String
    let maxProblems: Int
    private(set) var problems: [LintProblem] = []
    private(set) var dropped = 0

    init(file: String, maxProblems: Int) {
        self.file = file
        self.maxProblems = max(1, maxProblems)
    }

    /// A problem at `path`; nil for one of the file as a whole that no JSON
    /// path locates (a syntax error names its line and column in the message).
    mutating func add(_ path: JSONPath?, _ message: String) {
        if problems.count < maxProblems {
            problems.append(LintProblem(file: file, path: path?.description ?? "", message: message))
        } else {
            dropped += 1
        }
    }

    var isEmpty: Bool { problems.isEmpty }

    /// No more problems will be listed: callers skip the costly parts of a
    /// message (suggestions) for problems that would be dropped anyway.
    var isFull: Bool { problems.count >= maxProblems }

    /// The problems, with a last line that counts those left out.
    var report: [LintProblem] {
        guard dropped > 0 else { return problems }
        return problems + [LintProblem(file: file, path: "$", message: "\(dropped) more problems not shown")]
    }
}

/// An object's members with the keys it may have; reading a key marks it used.
struct ObjectView {
    let members: [JSONMember]
    let path: JSONPath

    subscript(key: String) -> JSONNode? {
        members.first { $0.key == key }?.value
    }

    func has(_ key: String) -> Bool { members.contains { $0.key == key } }
}

/// Typed reading of JSON nodes that reports what it expected, where.
struct DocumentReader {
    var sink: LintSink
    let limits: FlowLoadLimits

    // MARK: Shapes

    /// A likely intended word for a typo, unless the problem will not be listed.
    func suggest(_ word: String, in candidates: [String]) -> String? {
        sink.isFull ? nil : nearest(word, in: candidates)
    }

    /// `did you mean "x"? ` for a likely typo of `word`, to open the list of
    /// what was expected in parentheses; empty when there is none.
    func didYouMean(_ word: String, in candidates: [String]) -> String {
        suggest(word, in: candidates).map { "did you mean \(quoted($0))? " } ?? ""
    }

    /// ` (did you mean "x"?)` for a likely typo of `word`, to end a message;
    /// empty when there is none.
    func didYouMeanSuffix(_ word: String, in candidates: [String]) -> String {
        suggest(word, in: candidates).map { " (did you mean \(quoted($0))?)" } ?? ""
    }

    /// The node as an object, or a problem "expected <what> (an object)".
    mutating func object(_ node: JSONNode, _ path: JSONPath, _ what: String) -> ObjectView? {
        guard case .object(let members) = node else {
            sink.add(path, "expected \(what) (an object), got \(node.kindName)")
            return nil
        }
        return ObjectView(members: members, path: path)
    }

    /// Reports every key of `object` not in `allowed`, suggesting the nearest.
    mutating func checkKeys(_ object: ObjectView, allowed: [String], in what: String) {
        for m in object.members where !allowed.contains(m.key) {
            sink.add(
                object.path / m.key,
                "unknown key \(quoted(m.key)) in \(what) (\(didYouMean(m.key, in: allowed))expected one of \(allowed.joined(separator: ", ")))")
        }
    }

    mutating func array(_ node: JSONNode, _ path: JSONPath, _ what: String, max: Int) -> [JSONNode]? {
        guard case .array(let items) = node else {
            sink.add(path, "expected \(what) (an array), got \(node.kindName)")
            return nil
        }
        if items.count > max {
            sink.add(path, "\(items.count) entries are over the limit of \(max)")
            return Array(items.prefix(max))
        }
        return items
    }

    // MARK: Scalars

    mutating func string(_ node: JSONNode, _ path: JSONPath, _ what: String, allowEmpty: Bool = false) -> String? {
        guard case .string(let s) = node else {
            sink.add(path, "expected \(what) (a string), got \(node.kindName)")
            return nil
        }
        if s.utf8.count > limits.maxStringBytes {
            sink.add(path, "the string is longer than \(limits.maxStringBytes) bytes")
            return nil
        }
        if !allowEmpty && s.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) {
            sink.add(path, "\(what) must not be empty")
            return nil
        }
        return s
    }

    mutating func bool(_ node: JSONNode, _ path: JSONPath) -> Bool? {
        guard case .bool(let b) = node else {
            sink.add(path, "expected true or false, got \(node.kindName)")
            return nil
        }
        return b
    }

    /// A whole number in `range`.
    mutating func integer(_ node: JSONNode, _ path: JSONPath, _ range: ClosedRange<Int>) -> Int? {
        let value: Int?
        switch node {
        case .integer(let i): value = Int(exactly: i)
        case .number(let d): value = d.rounded() == d && abs(d) < 1e15 ? Int(d) : nil
        default:
            sink.add(path, "expected a whole number, got \(node.kindName)")
            return nil
        }
        guard let v = value else {
            sink.add(path, "expected a whole number, got a fraction")
            return nil
        }
        guard range.contains(v) else {
            sink.add(path, "\(v) is out of range (expected \(range.lowerBound) to \(range.upperBound))")
            return nil
        }
        return v
    }

    mutating func number(_ node: JSONNode, _ path: JSONPath) -> Double? {
        switch node {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default:
            sink.add(path, "expected a number, got \(node.kindName)")
            return nil
        }
    }

    // MARK: flowd's own shapes

    /// An id: a letter, then letters, digits, `_` or `-`. An option id
    /// (`letterFirst` false) may start with any of them, so that a rating
    /// scale (`"1"` … `"5"`) or time slots (`"09"`) are ids as they are.
    mutating func identifier(_ node: JSONNode, _ path: JSONPath, _ what: String, letterFirst: Bool = true) -> String? {
        guard let s = string(node, path, what) else { return nil }
        guard s.utf8.count <= limits.maxIDLength else {
            sink.add(path, "\(what) is longer than \(limits.maxIDLength) bytes")
            return nil
        }
        let firstOK = !letterFirst || s.unicodeScalars.first.map(isASCIILetter) == true
        guard firstOK, s.unicodeScalars.allSatisfy(isIDScalar) else {
            let expected = letterFirst ? "a letter, then letters" : "letters"
            sink.add(path, "\(what) \(quoted(s)) is not valid (expected \(expected), digits, '_' or '-')")
            return nil
        }
        return s
    }

    /// A character ids are made of: an ASCII letter or digit, `_` or `-`.
    private func isIDScalar(_ c: Unicode.Scalar) -> Bool {
        isASCIILetter(c) || isASCIIDigit(c) || c == "_" || c == "-"
    }

    /// A plugin capability name: dotted lowercase words, such as `flowd.time-slots`.
    mutating func capabilityName(_ node: JSONNode, _ path: JSONPath) -> String? {
        guard let s = string(node, path, "a plugin name") else { return nil }
        let words = s.split(separator: ".", omittingEmptySubsequences: false)
        let ok =
            s.utf8.count <= 128 && words.count >= 2
            && words.allSatisfy { w in
                !w.isEmpty && w.first != "-" && w.last != "-"
                    && w.unicodeScalars.allSatisfy { isASCIIDigit($0) || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "-" }
            }
        guard ok else {
            sink.add(path, "\(quoted(s)) is not a plugin name (expected dotted lowercase words, like \"flowd.spool\")")
            return nil
        }
        return s
    }

    /// A freedesktop icon name.
    mutating func iconName(_ node: JSONNode, _ path: JSONPath) -> String? {
        guard let s = string(node, path, "an icon name") else { return nil }
        guard s.utf8.count <= 128,
            s.unicodeScalars.allSatisfy({ isASCIILetter($0) || isASCIIDigit($0) || $0 == "-" || $0 == "_" || $0 == "." })
        else {
            sink.add(path, "\(quoted(s)) is not an icon name (expected a freedesktop name like \"dialog-information\")")
            return nil
        }
        return s
    }

    /// A human string: plain, or a map of locale → text.
    mutating func localized(_ node: JSONNode, _ path: JSONPath, _ what: String) -> LocalizedText? {
        switch node {
        case .string:
            return string(node, path, what).map { LocalizedText($0) }
        case .object(let members):
            if members.isEmpty {
                sink.add(path, "\(what) has no translations (expected a string or an object like {\"en\": \"…\"})")
                return nil
            }
            if members.count > limits.maxTranslations {
                sink.add(path, "\(members.count) translations are over the limit of \(limits.maxTranslations)")
                return nil
            }
            var list: [LocalizedText.Translation] = []
            var seen: Set<String> = []
            var ok = true
            for m in members {
                let p = path / m.key
                if !LocaleFallback.isWellFormed(m.key) {
                    sink.add(p, "\(quoted(m.key)) is not a locale tag (expected one like \"en\", \"de\" or \"pt-BR\")")
                    ok = false
                    continue
                }
                if !seen.insert(m.key.lowercased()).inserted {
                    sink.add(p, "the locale \(quoted(m.key)) is given twice")
                    ok = false
                    continue
                }
                guard let s = string(m.value, p, "a translation") else {
                    ok = false
                    continue
                }
                list.append(LocalizedText.Translation(locale: m.key, text: s))
            }
            return ok ? LocalizedText(translations: list) : nil
        default:
            sink.add(path, "expected \(what) (a string, or an object of translations like {\"en\": \"…\"}), got \(node.kindName)")
            return nil
        }
    }

    /// An `options` object for a plugin.
    mutating func pluginOptions(_ node: JSONNode, _ path: JSONPath) -> [String: JSONValue]? {
        guard case .object = node else {
            sink.add(path, "expected the plugin's options (an object), got \(node.kindName)")
            return nil
        }
        return node.jsonValue.objectValue
    }
}

/// The candidate closest to `word` by edit distance, when it is close enough
/// to be a likely typo (flowctl's "did you mean" for a command too).
package func nearest(_ word: String, in candidates: [String]) -> String? {
    let w = Array(word.lowercased().unicodeScalars)
    guard w.count <= 64 else { return nil }
    var best: (String, Int)?
    for c in candidates {
        let d = editDistance(w, Array(c.lowercased().unicodeScalars))
        let allowed = c.count <= 4 ? 1 : 2
        if d <= allowed && d < (best?.1 ?? Int.max) { best = (c, d) }
    }
    return best?.0
}

/// The optimal string alignment distance: insertions, deletions,
/// substitutions and swaps of two neighbours each cost 1 ("wbe" → "web" is 1).
private func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
            }
        }
    }
    return d[a.count][b.count]
}
