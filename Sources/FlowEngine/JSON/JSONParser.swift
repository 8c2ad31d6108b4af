/// A strict RFC 8259 JSON parser over UTF-8 bytes, with bounds.
///
/// Why not `JSONDecoder`: the linter must report *every* problem with its JSON
/// path, see unknown and duplicate keys, keep member order and tell integers
/// from fractions. And a flow file is semi-trusted input, so the parser bounds
/// nesting depth (its recursion is bounded by `maxDepth`, never by the input),
/// string size and number length, and refuses invalid UTF-8 and U+0000 (which
/// D-Bus strings cannot carry).
struct JSONParser {
    struct Limits {
        var maxDepth: Int
        var maxStringBytes: Int
        /// Longer number literals are refused before conversion.
        var maxNumberLength: Int = 64
    }

    /// A syntax error: where it is (line and column; a document that does
    /// not parse has no JSON path to name) and what was expected.
    struct SyntaxError: Error {
        var line: Int
        var column: Int
        var message: String
    }

    /// The parsed document and the duplicate keys found on the way.
    struct Result {
        var root: JSONNode
        var duplicateKeys: [JSONPath]
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private var pos = 0
    private var path = JSONPath.root
    private var depth = 0
    private var duplicates: [JSONPath] = []

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses one JSON document that fills all of `bytes` (a UTF-8 byte order
    /// mark is skipped).
    static func parse(_ bytes: [UInt8], limits: Limits) throws(SyntaxError) -> Result {
        var p = JSONParser(bytes: bytes, limits: limits)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.pos = 3 }
        p.skipWhitespace()
        if p.pos == bytes.count { throw p.error("the file is empty; expected a JSON object") }
        let root = try p.parseValue()
        p.skipWhitespace()
        if p.pos != bytes.count { throw p.error("unexpected \(p.describeHere()) after the end of the document") }
        return Result(root: root, duplicateKeys: p.duplicates)
    }

    // MARK: Values

    private mutating func parseValue() throws(SyntaxError) -> JSONNode {
        guard pos < bytes.count else { throw error("unexpected end of file; expected a value") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(describeHere()); expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        if depth > limits.maxDepth {
            throw error("nesting is deeper than \(limits.maxDepth) levels")
        }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONNode {
        try enter()
        pos += 1
        var members: [JSONMember] = []
        var seen: Set<String> = []
        skipWhitespace()
        if close(UInt8(ascii: "}")) { return .object([]) }
        let outer = path
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else {
                throw error("unexpected \(describeHere()); expected a member name in double quotes")
            }
            let key = try parseString()
            path = outer / key
            if !seen.insert(key).inserted { duplicates.append(path) }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw error("unexpected \(describeHere()); expected ':' after the member name") }
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONMember(key: key, value: value))
            path = outer
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            if close(UInt8(ascii: "}")) { return .object(members) }
            throw error("unexpected \(describeHere()); expected ',' or '}' after an object member")
        }
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONNode {
        try enter()
        pos += 1
        var items: [JSONNode] = []
        skipWhitespace()
        if close(UInt8(ascii: "]")) { return .array([]) }
        let outer = path
        while true {
            path = outer / items.count
            skipWhitespace()
            items.append(try parseValue())
            path = outer
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            if close(UInt8(ascii: "]")) { return .array(items) }
            throw error("unexpected \(describeHere()); expected ',' or ']' after an array element")
        }
    }

    // MARK: Strings

    private mutating func parseString() throws(SyntaxError) -> String {
        let start = pos
        pos += 1  // opening quote
        var buffer: [UInt8] = []
        while true {
            guard pos < bytes.count else {
                pos = start
                throw error("this string is never closed")
            }
            let b = bytes[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                break
            }
            if b < 0x20 {
                throw error("a control character (U+\(hex4(UInt32(b)))) inside a string must be escaped")
            }
            if b == UInt8(ascii: "\\") {
                try parseEscape(into: &buffer)
            } else {
                buffer.append(b)
                pos += 1
            }
            if buffer.count > limits.maxStringBytes {
                pos = start
                throw error("a string is longer than \(limits.maxStringBytes) bytes")
            }
        }
        guard let s = String(validating: buffer, as: UTF8.self) else {
            pos = start
            throw error("a string is not valid UTF-8")
        }
        return s
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(SyntaxError) {
        pos += 1  // backslash
        guard pos < bytes.count else { throw error("unexpected end of file inside an escape") }
        let c = bytes[pos]
        pos += 1
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(c)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var code = try parseHex4()
            if code >= 0xD800 && code < 0xDC00 {
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                else { throw error("a \\u escape of a high surrogate must be followed by a low surrogate") }
                pos += 2
                let low = try parseHex4()
                guard low >= 0xDC00 && low < 0xE000 else {
                    throw error("a \\u escape of a high surrogate must be followed by a low surrogate")
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if code >= 0xDC00 && code < 0xE000 {
                throw error("a \\u escape of a lone low surrogate is not a character")
            }
            if code == 0 { throw error("strings cannot contain U+0000") }
            guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
            UTF8.encode(scalar) { buffer.append($0) }
        default:
            pos -= 1
            throw error("unknown escape '\\\(describeByte(c))' (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw error("a \\u escape needs four hex digits") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = Character(Unicode.Scalar(bytes[pos])).hexDigitValue else {
                throw error("a \\u escape needs four hex digits")
            }
            v = v << 4 | UInt32(d)
            pos += 1
        }
        return v
    }

    // MARK: Numbers and words

    private mutating func parseNumber() throws(SyntaxError) -> JSONNode {
        let start = pos
        var isInteger = true
        _ = consume(UInt8(ascii: "-"))
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw error("a number needs a digit after '-'") }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw error("a number cannot have a leading zero") }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw error("a number needs a digit after '.'") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            isInteger = false
            _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw error("a number needs a digit in its exponent") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos - start > limits.maxNumberLength {
            pos = start
            throw error("a number literal is longer than \(limits.maxNumberLength) characters")
        }
        let literal = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isInteger, let i = Int64(literal) { return .integer(i) }
        guard let d = Double(literal), d.isFinite else {
            pos = start
            throw error("the number \(literal) is out of range")
        }
        return .number(d)
    }

    private mutating func expectWord(_ word: StaticString) throws(SyntaxError) {
        let w = word.withUTF8Buffer { Array($0) }
        guard pos + w.count <= bytes.count, Array(bytes[pos..<pos + w.count]) == w else {
            throw error("unexpected \(describeHere()); expected a value (object, array, string, number, true, false or null)")
        }
        pos += w.count
    }

    // MARK: Helpers

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private func peek(_ b: UInt8) -> Bool { pos < bytes.count && bytes[pos] == b }

    /// Steps over `b` when it comes next.
    private mutating func consume(_ b: UInt8) -> Bool {
        guard peek(b) else { return false }
        pos += 1
        return true
    }

    /// Steps over the bracket `b` that closes an object or array, if it comes next.
    private mutating func close(_ b: UInt8) -> Bool {
        guard consume(b) else { return false }
        depth -= 1
        return true
    }

    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    private func describeHere() -> String {
        pos < bytes.count ? "'\(describeByte(bytes[pos]))'" : "end of file"
    }

    private func describeByte(_ b: UInt8) -> String {
        if b >= 0x21 && b < 0x7F { return String(UnicodeScalar(b)) }
        return "\\x" + String(b, radix: 16)
    }

    private func hex4(_ v: UInt32) -> String {
        let h = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - h.count)) + h
    }

    /// A syntax error at the current position; line and column count from 1,
    /// the column in characters (UTF-8 continuation bytes are not counted).
    private func error(_ message: String) -> SyntaxError {
        var line = 1
        var column = 1
        let end = min(pos, bytes.count)
        for b in bytes[0..<end] {
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return SyntaxError(line: line, column: column, message: message)
    }
}
