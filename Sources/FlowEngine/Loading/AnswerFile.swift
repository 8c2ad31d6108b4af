import FlowKit

/// Reads an answer file: answers for every step of a flow, as JSON, the shape
/// `flowctl answers --json` prints and the shipped submit actions write (the
/// spool file, the command's standard input, the webhook's body).
///
/// ```json
/// {"service": "website", "pageCount": 12, "features": ["calendar"], "newsletter": true}
/// {"id": "…", "flow": "consultation", …, "answers": {"service": "website", "pageCount": 12}}
/// ```
///
/// The second form, a submission document, is told by its `answers` member
/// being an object (an answer never is). Values are typed as the D-Bus
/// contract types them: a string, a whole number (an integer) or another
/// number, a boolean, or an array of strings; anything else is refused with
/// the field's name. Whether the fields exist and the values fit them is the
/// session's business (``FlowSession/run(answers:now:)``).
package enum AnswerFile {
    /// The largest answer file, in bytes (a flow file's own bound).
    package static let maxBytes = FlowLoadLimits.default.maxFileBytes

    /// The answers of `bytes`, and the flow id a submission document names.
    package static func parse(_ bytes: [UInt8]) throws(AnswerFileError) -> (answers: [String: AnswerValue], flow: String?) {
        guard bytes.count <= maxBytes else {
            throw AnswerFileError("the file is \(bytes.count) bytes, over the limit of \(maxBytes)")
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes, limits: JSONParser.Limits(maxDepth: 8, maxStringBytes: 1 << 20)).root
        } catch {
            throw AnswerFileError("syntax error at line \(error.line), column \(error.column): \(error.message)")
        }
        guard case .object(var members) = root else {
            throw AnswerFileError("expected an object of answers (field id → value), got \(root.kindName)")
        }
        var flow: String?
        if let document = members.first(where: { $0.key == "answers" }), case .object(let answers) = document.value {
            if case .string(let id)? = members.first(where: { $0.key == "flow" })?.value { flow = id }
            members = answers
        }
        var out: [String: AnswerValue] = [:]
        for member in members {
            guard out[member.key] == nil else { throw AnswerFileError("\(quoted(member.key)) is given twice") }
            out[member.key] = try value(member.value, field: member.key)
        }
        return (out, flow)
    }

    private static func value(_ node: JSONNode, field: String) throws(AnswerFileError) -> AnswerValue {
        switch node {
        case .string(let s): return .text(s)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .number(let d): return .number(d)
        case .array(let items):
            return .list(try items.map { (item) throws(AnswerFileError) -> String in
                guard case .string(let s) = item else {
                    throw AnswerFileError("\(quoted(field)): a list of options holds strings (option ids), not \(item.kindName)")
                }
                return s
            })
        case .null, .object:
            throw AnswerFileError("\(quoted(field)): expected a string, a number, a boolean or a list of option ids, got \(node.kindName)")
        }
    }
}

/// Why an answer file cannot be read: a sentence naming the field or the
/// place.
package struct AnswerFileError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String

    init(_ message: String) { self.message = message }

    package var description: String { message }
}
