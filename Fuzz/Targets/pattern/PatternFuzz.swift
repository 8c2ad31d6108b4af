// fuzz-pattern: the pattern dialect (FlowEngine's PatternRegex) on any
// pattern and value. Compiling never crashes and a refusal names a position
// inside the pattern; matching is deterministic, bounded by the documented
// work, and a pattern made by escaping a value matches exactly that value.
import FlowKit
import FuzzSupport

@testable import FlowEngine

/// The dialect's characters that `\` makes literal.
let metacharacters: Set<Unicode.Scalar> = [".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "\\", "^", "$", "/", "-"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPattern(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let source = input.string(limit: 200)
    let value = String(decoding: input.rest(), as: UTF8.self)

    do {
        let pattern = try PatternRegex(source)
        require(pattern.maxInputLength >= 1, "maxInputLength \(pattern.maxInputLength)")
        if value.unicodeScalars.count <= pattern.maxInputLength {
            let first = pattern.matches(value)
            require(pattern.matches(value) == first, "matching \(source) twice gave two answers")
        }
    } catch {
        let length = source.unicodeScalars.count
        require(error.position >= 1 && error.position <= length + 1,
                "error position \(error.position) outside a pattern of \(length) characters: \(error.message)")
        require(!error.message.isEmpty, "a compile error without a message")
    }

    // The value as a literal: escape what the dialect treats specially.
    let literal = value.unicodeScalars.prefix(80)
    var escaped = ""
    for scalar in literal {
        if metacharacters.contains(scalar) { escaped += "\\" }
        switch scalar {
        case "\n": escaped += "\\n"
        case "\t": escaped += "\\t"
        case "\r": escaped += "\\r"
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    let text = String(String.UnicodeScalarView(literal))
    if let exact = try? PatternRegex(escaped), text.unicodeScalars.count <= exact.maxInputLength {
        require(exact.matches(text), "the escaped literal \(escaped) does not match its own text")
        require(!exact.matches(text + "x"), "the escaped literal \(escaped) matches more than its text")
    }
    return 0
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzPattern) }
}
#endif
