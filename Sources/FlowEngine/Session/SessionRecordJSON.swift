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
    ///
    /// Inlined so that the literal's length is a constant where it is
    /// called: the copy becomes a few moves instead of a call to `memcpy`
    /// (about 70 instructions a key before, 22 keys a record).
    @inline(__always)
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

    /// True for the bytes a JSON string cannot hold as they are (internal:
    /// the tests hold the eight-byte test below against it).
    @inline(__always)
    static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
    }

    /// Whether any byte of `word` is one a JSON string cannot hold as it is
    /// (below 0x20, `"` or `\`), eight bytes at a time. Exact as a yes or
    /// no: a byte below 0x20 sets its high bit in `word - 0x20…`, a byte equal
    /// to the quote or the backslash is zero after the exclusive or; bytes of
    /// 0x80 and above (UTF-8 beyond ASCII) never count, as `~word` clears them.
    @inline(__always)
    static func needsEscape(word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        let quoteZero = (quote &- ones) & ~quote
        let backslashZero = (backslash &- ones) & ~backslash
        return (control | quoteZero | backslashZero) & highs != 0
    }

    /// Copies `utf8` between quotes when none of its bytes needs an escape,
    /// eight bytes at a time (the scan and the copy in one pass); returns
    /// false, having written nothing, when one does.
    private mutating func plainString(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = utf8.count
        guard let source = utf8.baseAddress else {
            reserve(2)
            base[count] = UInt8(ascii: "\"")
            base[count + 1] = UInt8(ascii: "\"")
            count += 2
            return true
        }
        reserve(n + 2)
        let target = UnsafeMutableRawPointer(base + count + 1)
        let from = UnsafeRawPointer(source)
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                let word = from.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if Self.needsEscape(word: word) { return false }
                target.storeBytes(of: word, toByteOffset: i, as: UInt64.self)
                i += 8
            }
            if i < n {
                // The last eight bytes, overlapping some already copied.
                let word = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                if Self.needsEscape(word: word) { return false }
                target.storeBytes(of: word, toByteOffset: n - 8, as: UInt64.self)
            }
        } else {
            for i in 0..<n {
                let b = source[i]
                if Self.needsEscape(b) { return false }
                target.storeBytes(of: b, toByteOffset: i, as: UInt8.self)
            }
        }
        base[count] = UInt8(ascii: "\"")
        base[count + 1 + n] = UInt8(ascii: "\"")
        count += n + 2
        return true
    }

    mutating func string(_ s: String) {
        // Most strings need no escape: one pass that scans and copies, on the
        // string's own bytes (no copy of the string to call `withUTF8`).
        if s.utf8.withContiguousStorageIfAvailable({ plainString($0) }) == true {
            needsComma = true
            return
        }
        var s = s
        s.withUTF8 { utf8 in
            if plainString(utf8) { return }
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

    /// "00" to "99": two digits per division, as timestamps have sixteen.
    private static let digitPairs: StaticString = """
        0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    mutating func unsigned(_ n: UInt64) {
        // Digits written in place from the end of their room (no array of digits).
        var digits = 1
        var power: UInt64 = 10
        while digits < 20, n >= power {
            digits += 1
            power &*= 10
        }
        reserve(digits)
        let pairs = Self.digitPairs.utf8Start
        var rest = n
        var i = count + digits
        while rest >= 100 {
            let pair = Int(rest % 100) &* 2
            rest /= 100
            i -= 2
            base[i] = pairs[pair]
            base[i + 1] = pairs[pair + 1]
        }
        if rest >= 10 {
            let pair = Int(rest) &* 2
            base[i - 2] = pairs[pair]
            base[i - 1] = pairs[pair + 1]
        } else {
            base[i - 1] = 0x30 + UInt8(rest)
        }
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
