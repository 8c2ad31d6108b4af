/// A value that may appear in a log entry: in a message's interpolation or
/// as a metadata field.
///
/// **The rule that keeps secrets out of logs:** log calls accept only
/// ``LogMessage`` (whose interpolation takes only `LogValue`s) and
/// ``LogMetadata`` (whose values are `LogValue`s). A type that can hold a
/// secret, such as what a person typed into a form, must never be given
/// this conformance. Interpolating such a value into a log message then
/// fails to compile instead of writing it out, and getting a secret into a
/// log line takes a deliberate extraction that review can see.
///
/// Identifiers, numbers, flags, durations and plain strings (ids, names,
/// error messages) conform.
///
/// **A plain `String` is not protected.** `String` conforms so that ids and
/// messages can be logged, which means an answer already turned into a
/// `String` (by `String(describing:)`, a text accessor, an interpolation
/// into a `String` first) goes through like any other text. The rule stops
/// the accident of interpolating a secret-holding value; it cannot stop a
/// deliberate extraction, which is what review looks for.
package protocol LogValue {
    /// The value as log text.
    var logText: String { get }
}

extension String: LogValue {
    package var logText: String { self }
}

extension Substring: LogValue {
    package var logText: String { String(self) }
}

extension StaticString: LogValue {
    package var logText: String { description }
}

extension Bool: LogValue {
    package var logText: String { self ? "true" : "false" }
}

extension Int: LogValue { package var logText: String { String(self) } }
extension Int8: LogValue { package var logText: String { String(self) } }
extension Int16: LogValue { package var logText: String { String(self) } }
extension Int32: LogValue { package var logText: String { String(self) } }
extension Int64: LogValue { package var logText: String { String(self) } }
extension UInt: LogValue { package var logText: String { String(self) } }
extension UInt8: LogValue { package var logText: String { String(self) } }
extension UInt16: LogValue { package var logText: String { String(self) } }
extension UInt32: LogValue { package var logText: String { String(self) } }
extension UInt64: LogValue { package var logText: String { String(self) } }

extension Double: LogValue {
    package var logText: String { description }
}

extension Duration: LogValue {
    package var logText: String { description }
}

extension LogLevel: LogValue {
    package var logText: String { name }
}

extension MessageID: LogValue {
    package var logText: String { rawValue }
}

/// A log message. Write it as a string literal; interpolations accept only
/// ``LogValue``s, so `"\(answers)"` does not compile (see ``LogValue`` for
/// why).
package struct LogMessage: ExpressibleByStringInterpolation, Sendable, Hashable, CustomStringConvertible {
    /// The finished text.
    package let text: String

    package init(stringLiteral value: String) {
        text = value
    }

    package init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
    }

    package var description: String { text }

    /// Builds a ``LogMessage`` from literal text and ``LogValue``s.
    ///
    /// Into bytes, made a string once: each `+=` on a `String` cost some
    /// 350 instructions (seven of them for `Continue`'s line).
    package struct StringInterpolation: StringInterpolationProtocol {
        var bytes: [UInt8] = []

        var text: String { String(decoding: bytes, as: UTF8.self) }

        package init(literalCapacity: Int, interpolationCount: Int) {
            // Ids are 32 characters: room for a few of them at once, so
            // that a line such as Continue's is not grown.
            bytes.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        package mutating func appendLiteral(_ literal: String) {
            append(literal)
        }

        package mutating func appendInterpolation(_ value: some LogValue) {
            append(value.logText)
        }

        /// `text`'s bytes, copied at once when it is contiguous (native
        /// and literal strings are).
        private mutating func append(_ text: String) {
            if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
                bytes.append(contentsOf: text.utf8)
            }
        }
    }
}

/// Structured fields for one log entry or for every entry of a ``Logger``,
/// in insertion order; setting a field again replaces it.
package struct LogMetadata: ExpressibleByDictionaryLiteral, Sendable, Hashable, Sequence {
    private var storage: [(field: LogField, text: String)] = []

    /// No fields.
    package init() {}

    /// Fields from a literal such as `[.session: id, .uid: uid]`.
    package init(dictionaryLiteral elements: (LogField, any LogValue)...) {
        storage.reserveCapacity(elements.count)
        for (field, value) in elements { self[field] = value }
    }

    /// Fields whose values are texts already, such as
    /// `[(.session, id), (.flow, flowID)]`, kept as given: the literal boxes
    /// each value in an existential and searches the fields for each one
    /// (some 1,000 instructions a field, on every `Continue`'s log line). A
    /// field given twice keeps its last text, as in a literal.
    package init(texts fields: [(field: LogField, text: String)]) {
        storage = fields
        for i in fields.indices.dropFirst() where fields[..<i].contains(where: { $0.field == fields[i].field }) {
            storage = []
            for (field, text) in fields { self[field] = text }
            return
        }
    }

    /// The text of `field`; set a ``LogValue`` to add or replace it, nil to remove it.
    package subscript(field: LogField) -> (any LogValue)? {
        get { storage.first { $0.field == field }?.text }
        set {
            guard let newValue else {
                storage.removeAll { $0.field == field }
                return
            }
            let text = newValue.logText
            if let index = storage.firstIndex(where: { $0.field == field }) {
                storage[index].text = text
            } else {
                storage.append((field, text))
            }
        }
    }

    /// The text of `field`, if set.
    package func text(of field: LogField) -> String? {
        storage.first { $0.field == field }?.text
    }

    /// True when no field is set.
    package var isEmpty: Bool { storage.isEmpty }

    /// The number of fields.
    package var count: Int { storage.count }

    /// These fields, then those of `other` (which win on the same field).
    package func merging(_ other: LogMetadata) -> LogMetadata {
        if storage.isEmpty { return other }
        var result = self
        // Room for all at once: growing the array field by field moved it each time.
        result.storage.reserveCapacity(storage.count + other.storage.count)
        for (field, text) in other.storage { result[field] = text }
        return result
    }

    package func makeIterator() -> IndexingIterator<[(field: LogField, text: String)]> {
        storage.makeIterator()
    }

    package static func == (lhs: LogMetadata, rhs: LogMetadata) -> Bool {
        lhs.storage.elementsEqual(rhs.storage) { $0.field == $1.field && $0.text == $1.text }
    }

    package func hash(into hasher: inout Hasher) {
        for (field, text) in storage {
            hasher.combine(field)
            hasher.combine(text)
        }
    }
}
