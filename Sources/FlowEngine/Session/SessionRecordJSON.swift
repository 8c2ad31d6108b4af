import FlowKit

/// Why a record could not be written as JSON.
package struct RecordEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, naming the offending value's place.
    package let message: String

    package var description: String { message }
}

extension SessionRecord {
    /// The record as the JSON that `JSONEncoder` makes of it (the same keys
    /// and values, so `JSONDecoder` reads either), written directly into bytes.
    ///
    /// Why: the daemon stores the record after every change, and the generic
    /// `Encodable` path costs about ten times as much as the SQLite commit
    /// itself (docs/performance.md). Keys follow the synthesized `Codable`
    /// conformance (property names; `nil` optionals left out), numbers are
    /// written as `JSONEncoder` writes them (a whole `Double` without `.0`),
    /// dictionary keys are sorted so equal records give equal bytes.
    /// `FastPathTests` checks that both encodings decode to the same record,
    /// for every property.
    ///
    /// - Throws: for a number that is not finite (as `JSONEncoder` does by
    ///   default), which only a plugin's receipt could carry.
    package func encodedJSON() throws(RecordEncodingError) -> [UInt8] {
        var w = RecordJSONWriter()
        w.bytes.reserveCapacity(1536)
        w.open()
        w.key("formatVersion"); w.integer(Int64(formatVersion))
        w.key("id"); w.string(id)
        w.key("flowID"); w.string(flowID)
        w.key("flowFingerprint"); w.string(flowFingerprint)
        w.key("owner"); w.unsigned(UInt64(owner))
        w.key("locale"); w.string(locale)
        w.key("createdAt"); w.integer(createdAt)
        w.key("updatedAt"); w.integer(updatedAt)
        w.key("revision"); w.unsigned(revision)
        w.key("state"); w.string(state.rawValue)
        w.key("currentStep"); w.string(currentStep)
        w.key("returningToReview"); w.bool(returningToReview)
        w.key("visited"); w.strings(visited)
        w.key("completed"); w.strings(completed)
        w.key("shownErrors"); w.strings(shownErrors)
        w.key("answers")
        try w.object(answers) { (w, value) throws(RecordEncodingError) in try w.answer(value) }
        w.key("secureFieldsSet"); w.strings(secureFieldsSet)
        w.key("dynamicOptions")
        try w.object(dynamicOptions) { (w, options) throws(RecordEncodingError) in
            w.bytes.append(UInt8(ascii: "["))
            for (i, option) in options.enumerated() {
                if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
                w.open()
                w.key("id"); w.string(option.id)
                w.key("label"); w.string(option.label)
                if let icon = option.icon { w.key("icon"); w.string(icon) }
                w.close()
            }
            w.bytes.append(UInt8(ascii: "]"))
        }
        w.key("stepMessages")
        try w.object(stepMessages) { (w, messages) throws(RecordEncodingError) in
            w.open()
            w.key("revision"); w.unsigned(messages.revision)
            w.key("messages")
            try w.object(messages.messages) { (w, text) throws(RecordEncodingError) in w.string(text) }
            w.key("warnings")
            try w.object(messages.warnings) { (w, text) throws(RecordEncodingError) in w.string(text) }
            w.close()
        }
        if let lastError { w.key("lastError"); w.string(lastError) }
        w.key("announcement"); w.string(announcement)
        w.key("announcementSequence"); w.unsigned(announcementSequence)
        w.key("announcedWarnings")
        try w.object(announcedWarnings) { (w, text) throws(RecordEncodingError) in w.string(text) }
        if let receipt {
            w.key("receipt")
            try w.object(receipt) { (w, value) throws(RecordEncodingError) in try w.json(value, at: "receipt") }
        }
        if let submittedAt { w.key("submittedAt"); w.integer(submittedAt) }
        w.close()
        return w.bytes
    }
}

/// A minimal JSON writer: objects, arrays, strings, numbers, into one buffer.
struct RecordJSONWriter {
    var bytes: [UInt8] = []
    private var needsComma = false

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// A key given as a literal: the record's property names are plain ASCII
    /// that needs no escaping, so their bytes are copied as they are.
    mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// True for the bytes a JSON string cannot hold as they are.
    @inline(__always)
    private static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
    }

    mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            // Most strings need no escape: one scan, then one copy.
            guard utf8.contains(where: Self.needsEscape) else {
                bytes.append(contentsOf: utf8)
                return
            }
            var start = 0
            for (i, b) in utf8.enumerated() where Self.needsEscape(b) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                bytes.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(b)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
                }
                start = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    mutating func integer(_ n: Int64) {
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(n.magnitude)
        } else {
            unsigned(UInt64(n))
        }
    }

    mutating func unsigned(_ n: UInt64) {
        if n < 10 {
            bytes.append(0x30 + UInt8(n))
        } else {
            // Digits written in place from the end of their room (no array of digits).
            var count = 1
            var tens = n / 10
            while tens > 0 {
                count += 1
                tens /= 10
            }
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0x30, count: count))
            var rest = n
            var i = start + count
            while rest > 0 {
                i -= 1
                bytes[i] = 0x30 + UInt8(rest % 10)
                rest /= 10
            }
        }
        needsComma = true
    }

    mutating func bool(_ b: Bool) {
        bytes.append(contentsOf: (b ? "true" : "false").utf8)
        needsComma = true
    }

    /// As `JSONEncoder` writes a `Double`: its description, without a trailing `.0`.
    mutating func double(_ d: Double, at place: String) throws(RecordEncodingError) {
        guard d.isFinite else { throw RecordEncodingError(message: "\(place): \(d) is not a number JSON can hold") }
        var text = d.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    mutating func strings(_ list: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (i, s) in list.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            string(s)
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// An object from a dictionary, keys sorted, each value written by `value`.
    mutating func object<V>(
        _ dictionary: [String: V], _ value: (inout RecordJSONWriter, V) throws(RecordEncodingError) -> Void
    ) throws(RecordEncodingError) {
        bytes.append(UInt8(ascii: "{"))
        if dictionary.count == 1, let (k, v) = dictionary.first {
            string(k)
            bytes.append(UInt8(ascii: ":"))
            try value(&self, v)
        } else {
            for (i, k) in dictionary.keys.sorted().enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                string(k)
                bytes.append(UInt8(ascii: ":"))
                if let v = dictionary[k] { try value(&self, v) }
            }
        }
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// An answer as its `Codable` conformance writes it: a plain JSON value.
    mutating func answer(_ value: AnswerValue) throws(RecordEncodingError) {
        switch value {
        case .text(let s): string(s)
        case .list(let l): strings(l)
        case .bool(let b): bool(b)
        case .integer(let i): integer(i)
        case .number(let d): try double(d, at: "an answer")
        }
    }

    mutating func json(_ value: JSONValue, at place: String) throws(RecordEncodingError) {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
            needsComma = true
        case .bool(let b): bool(b)
        case .number(let d): try double(d, at: place)
        case .string(let s): string(s)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                try json(item, at: place)
            }
            bytes.append(UInt8(ascii: "]"))
            needsComma = true
        case .object(let members):
            try object(members) { (w, v) throws(RecordEncodingError) in try w.json(v, at: place) }
        }
    }
}
