// fuzz-json: the flow files' JSON reader (FlowEngine's JSONParser) on any
// bytes. It must never crash, stay within its bounds, and read back what it
// accepted: a document printed again and read again is the same document.
import FlowCLI
import FuzzSupport

@testable import FlowEngine

let limits = JSONParser.Limits(maxDepth: 48, maxStringBytes: 2048)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let bytes = input.rest()
    let result: JSONParser.Result
    do {
        result = try JSONParser.parse(bytes, limits: limits)
    } catch {
        require(error.line >= 1 && error.column >= 1, "a syntax error at line \(error.line), column \(error.column)")
        require(!error.message.isEmpty, "a syntax error without a message")
        return 0
    }
    check(result.root, depth: 1)
    let printed = Array(JSONText.print(result.root).utf8)
    guard let again = try? JSONParser.parse(printed, limits: JSONParser.Limits(maxDepth: 64, maxStringBytes: 1 << 20))
    else {
        require(false, "its own printout does not parse: \(String(decoding: printed, as: UTF8.self))")
        return 0
    }
    require(again.root == result.root, "printed and read again, the document changed")
    return 0
}

/// The bounds hold for what was accepted.
func check(_ node: JSONNode, depth: Int) {
    require(depth <= limits.maxDepth + 1, "nesting \(depth) past the limit \(limits.maxDepth)")
    switch node {
    case .string(let s):
        require(s.utf8.count <= limits.maxStringBytes, "a string of \(s.utf8.count) bytes")
        require(!s.unicodeScalars.contains("\u{0}"), "a string with U+0000")
    case .number(let d):
        require(d.isFinite, "a number that is not finite")
    case .array(let items):
        for item in items { check(item, depth: depth + 1) }
    case .object(let members):
        for member in members {
            require(member.key.utf8.count <= limits.maxStringBytes, "a key of \(member.key.utf8.count) bytes")
            check(member.value, depth: depth + 1)
        }
    case .null, .bool, .integer:
        break
    }
}

/// Prints a document as JSON text (strings escaped as flowctl escapes them,
/// numbers as Swift prints them, which reads back to the same value).
enum JSONText {
    static func print(_ node: JSONNode) -> String {
        switch node {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .number(let d): return "\(d)"
        case .string(let s): return quote(s)
        case .array(let items): return "[" + items.map(print).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { quote($0.key) + ":" + print($0.value) }.joined(separator: ",") + "}"
        }
    }

    /// A string as flowctl's `--json` writes it: the fuzzer also checks that
    /// the CLI's escaping reads back through the engine's parser.
    static func quote(_ s: String) -> String { JSONOutput.string(s).serialized() }
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzJSON) }
}
#endif
