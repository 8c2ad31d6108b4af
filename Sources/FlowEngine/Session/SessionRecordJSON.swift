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
        var w = RecordJSONWriter(capacity: 1024)
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
            w.byte(UInt8(ascii: "["))
            for (i, option) in options.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.open()
                w.key("id"); w.string(option.id)
                w.key("label"); w.string(option.label)
                if let icon = option.icon { w.key("icon"); w.string(icon) }
                w.close()
            }
            w.byte(UInt8(ascii: "]"))
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
        return w.finish()
    }
}

/// A minimal JSON writer: objects, arrays, strings, numbers, into one buffer
/// of its own.
///
/// Why not an `[UInt8]`: every `append` to an array checks its uniqueness
/// and capacity, and `append(contentsOf:)` goes through generic code, about
/// a hundred instructions for a few bytes; a record takes some hundred of
/// them per change. Here each piece makes room once and copies its bytes.
struct RecordJSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    private var needsComma = false

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written.
    consuming func finish() -> [UInt8] {
        [UInt8](UnsafeBufferPointer(start: base, count: count))
    }

    /// Makes room for `n` more bytes.
    @inline(__always)
    private mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    /// Appends one byte.
    mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    /// Appends `n` bytes from `bytes`.
    private mutating func raw(_ bytes: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        (base + count).initialize(from: bytes, count: n)
        count += n
    }

    private mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        raw(start, bytes.count)
    }

    mutating func open() {
        byte(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func close() {
        byte(UInt8(ascii: "}"))
        needsComma = true
    }

    /// A key given as a literal: the record's property names are plain ASCII
    /// that needs no escaping, so their bytes are copied as they are.
    mutating func key(_ name: StaticString) {
        let n = name.utf8CodeUnitCount
        reserve(n + 4)
        if needsComma {
            base[count] = UInt8(ascii: ",")
            count += 1
        }
        base[count] = UInt8(ascii: "\"")
        (base + count + 1).initialize(from: name.utf8Start, count: n)
        base[count + 1 + n] = UInt8(ascii: "\"")
        base[count + 2 + n] = UInt8(ascii: ":")
        count += n + 3
        needsComma = true
    }

    /// True for the bytes a JSON string cannot hold as they are.
    @inline(__always)
    private static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            // Most strings need no escape: one scan, then one copy.
            guard utf8.contains(where: Self.needsEscape) else {
                reserve(utf8.count + 2)
                base[count] = UInt8(ascii: "\"")
                if let start = utf8.baseAddress { (base + count + 1).initialize(from: start, count: utf8.count) }
                base[count + 1 + utf8.count] = UInt8(ascii: "\"")
                count += utf8.count + 2
                return
            }
            byte(UInt8(ascii: "\""))
            var start = 0
            for (i, b) in utf8.enumerated() where Self.needsEscape(b) {
                raw(UnsafeBufferPointer(rebasing: utf8[start..<i]))
                byte(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(b)
                case 0x0A: byte(UInt8(ascii: "n"))
                case 0x0D: byte(UInt8(ascii: "r"))
                case 0x09: byte(UInt8(ascii: "t"))
                case 0x08: byte(UInt8(ascii: "b"))
                case 0x0C: byte(UInt8(ascii: "f"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    let digits = hex.utf8Start
                    byte(UInt8(ascii: "u"))
                    byte(0x30)
                    byte(0x30)
                    byte(digits[Int(b >> 4)])
                    byte(digits[Int(b & 0xF)])
                }
                start = i + 1
            }
            raw(UnsafeBufferPointer(rebasing: utf8[start...]))
            byte(UInt8(ascii: "\""))
        }
        needsComma = true
    }

    mutating func integer(_ n: Int64) {
        if n < 0 {
            byte(UInt8(ascii: "-"))
            unsigned(n.magnitude)
        } else {
            unsigned(UInt64(n))
        }
    }

    mutating func unsigned(_ n: UInt64) {
        // Digits written in place from the end of their room (no array of digits).
        var digits = 1
        var tens = n / 10
        while tens > 0 {
            digits += 1
            tens /= 10
        }
        reserve(digits)
        var rest = n
        var i = count + digits
        repeat {
            i -= 1
            base[i] = 0x30 + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        count += digits
        needsComma = true
    }

    mutating func bool(_ b: Bool) {
        let text: StaticString = b ? "true" : "false"
        raw(text.utf8Start, text.utf8CodeUnitCount)
        needsComma = true
    }

    /// As `JSONEncoder` writes a `Double`: its description, without a trailing `.0`.
    mutating func double(_ d: Double, at place: String) throws(RecordEncodingError) {
        guard d.isFinite else { throw RecordEncodingError(message: "\(place): \(d) is not a number JSON can hold") }
        var text = d.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { raw($0) }
        needsComma = true
    }

    mutating func strings(_ list: [String]) {
        byte(UInt8(ascii: "["))
        for (i, s) in list.enumerated() {
            if i > 0 { byte(UInt8(ascii: ",")) }
            string(s)
        }
        byte(UInt8(ascii: "]"))
        needsComma = true
    }

    /// An object from a dictionary, keys sorted, each value written by `value`.
    mutating func object<V>(
        _ dictionary: [String: V], _ value: (inout RecordJSONWriter, V) throws(RecordEncodingError) -> Void
    ) throws(RecordEncodingError) {
        byte(UInt8(ascii: "{"))
        if dictionary.count == 1, let (k, v) = dictionary.first {
            string(k)
            byte(UInt8(ascii: ":"))
            try value(&self, v)
        } else if !dictionary.isEmpty {
            for (i, k) in dictionary.keys.sorted().enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                string(k)
                byte(UInt8(ascii: ":"))
                if let v = dictionary[k] { try value(&self, v) }
            }
        }
        byte(UInt8(ascii: "}"))
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
            let text: StaticString = "null"
            raw(text.utf8Start, text.utf8CodeUnitCount)
            needsComma = true
        case .bool(let b): bool(b)
        case .number(let d): try double(d, at: place)
        case .string(let s): string(s)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                try json(item, at: place)
            }
            byte(UInt8(ascii: "]"))
            needsComma = true
        case .object(let members):
            try object(members) { (w, v) throws(RecordEncodingError) in try w.json(v, at: place) }
        }
    }
}
