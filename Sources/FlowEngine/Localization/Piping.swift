/// Answers piped into a flow's texts (format 2): `{field}` in a title, a
/// label, help, a content body, the review note or the success message is
/// replaced by that field's answer as the person reads it ("How many pages
/// should {service} have?"), and `{field|fallback}` says `fallback` when the
/// field has no answer ("Thanks, {name|there}!"). `{{` and `}}` are literal
/// braces. In format 1 files braces are plain text.
enum Piping {
    /// One `{field}` or `{field|fallback}` of a text.
    struct Placeholder: Sendable, Hashable {
        /// The field whose answer it shows.
        let field: String
        /// Where it starts, counting characters (Unicode scalars) from 1.
        let position: Int
    }

    /// Why a text's placeholders do not parse, and where.
    struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Counting characters (Unicode scalars) from 1.
        let position: Int
        let message: String

        var description: String { "at position \(position): \(message)" }
    }

    /// The placeholders of one text (one translation), in order; the linter
    /// checks the fields they name.
    static func placeholders(in text: String) throws(ParseError) -> [Placeholder] {
        let s = Array(text.unicodeScalars)
        var out: [Placeholder] = []
        var i = 0
        while i < s.count {
            if s[i] == "}" {
                i += i + 1 < s.count && s[i + 1] == "}" ? 2 : 1
                continue
            }
            guard s[i] == "{" else {
                i += 1
                continue
            }
            if i + 1 < s.count && s[i + 1] == "{" {
                i += 2
                continue
            }
            let start = i
            var j = i + 1
            var id = ""
            while j < s.count, isASCIILetter(s[j]) || isASCIIDigit(s[j]) || s[j] == "_" || s[j] == "-" {
                id.unicodeScalars.append(s[j])
                j += 1
            }
            guard let first = id.unicodeScalars.first, isASCIILetter(first) else {
                throw ParseError(position: start + 1, message: "'{' starts a placeholder: a field id, as in {name} or {name|fallback} (write {{ for a literal brace)")
            }
            if j < s.count, s[j] == "|" {
                j += 1
                while j < s.count, s[j] != "}" {
                    guard s[j] != "{" else {
                        throw ParseError(position: j + 1, message: "a fallback cannot contain '{'")
                    }
                    j += 1
                }
            }
            guard j < s.count, s[j] == "}" else {
                throw ParseError(position: start + 1, message: "the placeholder {\(id) has no closing '}' (a field id, then optionally |fallback)")
            }
            out.append(Placeholder(field: id, position: start + 1))
            i = j + 1
        }
        return out
    }

    /// True when a text may hold placeholders or escaped braces: the fast
    /// path for the many texts that have neither.
    static func mayPipe(_ text: String) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "}") }
    }

    /// `template` with every placeholder replaced by `value(field)`, else its
    /// fallback, else nothing; `{{` and `}}` become braces. A malformed
    /// placeholder (the linter refuses them) is left as it is.
    static func fill(_ template: String, _ value: (String) -> String?) -> String {
        guard mayPipe(template) else { return template }
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        let bar = UInt8(ascii: "|")
        let bytes = Array(template.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if (b == open || b == close) && i + 1 < bytes.count && bytes[i + 1] == b {
                out.append(b)
                i += 2
                continue
            }
            guard b == open, let end = bytes[(i + 1)...].firstIndex(of: close) else {
                out.append(b)
                i += 1
                continue
            }
            let inside = bytes[(i + 1)..<end]
            let id: String
            let fallback: String?
            if let sep = inside.firstIndex(of: bar) {
                id = String(decoding: inside[..<sep], as: UTF8.self)
                fallback = String(decoding: inside[(sep + 1)...], as: UTF8.self)
            } else {
                id = String(decoding: inside, as: UTF8.self)
                fallback = nil
            }
            out += Array((value(id) ?? fallback ?? "").utf8)
            i = end + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
