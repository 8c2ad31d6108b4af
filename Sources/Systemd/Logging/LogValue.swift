/// A value that may appear in a log entry: in a message's interpolation or
/// as a metadata field.
///
/// **The rule that keeps secrets out of logs:** log calls accept only
/// ``LogMessage`` (whose interpolation takes only `LogValue`s) and
/// ``LogMetadata`` (whose values are `LogValue`s). Answers are never a
/// `LogValue`: FlowKit's `AnswerValue`, dictionaries of answers, session
/// records and anything else that can hold what a person typed must not
/// be given this conformance. Interpolating such a value into a log message
/// then fails to compile instead of writing it out, and getting an answer
/// into a log line takes a deliberate extraction that review can see.
///
/// Identifiers, numbers, flags, durations and plain strings (ids, names,
/// error messages) conform.
public protocol LogValue {
    /// The value as log text.
    var logText: String { get }
}

extension String: LogValue {
    public var logText: String { self }
}

extension Substring: LogValue {
    public var logText: String { String(self) }
}

extension StaticString: LogValue {
    public var logText: String { description }
}

extension Bool: LogValue {
    public var logText: String { self ? "true" : "false" }
}

extension Int: LogValue { public var logText: String { String(self) } }
extension Int8: LogValue { public var logText: String { String(self) } }
extension Int16: LogValue { public var logText: String { String(self) } }
extension Int32: LogValue { public var logText: String { String(self) } }
extension Int64: LogValue { public var logText: String { String(self) } }
extension UInt: LogValue { public var logText: String { String(self) } }
extension UInt8: LogValue { public var logText: String { String(self) } }
extension UInt16: LogValue { public var logText: String { String(self) } }
extension UInt32: LogValue { public var logText: String { String(self) } }
extension UInt64: LogValue { public var logText: String { String(self) } }

extension Double: LogValue {
    public var logText: String { description }
}

extension Duration: LogValue {
    public var logText: String { description }
}

extension LogLevel: LogValue {
    public var logText: String { name }
}

extension MessageID: LogValue {
    public var logText: String { rawValue }
}

/// A log message. Write it as a string literal; interpolations accept only
/// ``LogValue``s, so `"\(answers)"` does not compile (see ``LogValue`` for
/// why).
public struct LogMessage: ExpressibleByStringInterpolation, Sendable, Hashable, CustomStringConvertible {
    /// The finished text.
    public let text: String

    public init(stringLiteral value: String) {
        text = value
    }

    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
    }

    public var description: String { text }

    /// Builds a ``LogMessage`` from literal text and ``LogValue``s.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        public mutating func appendInterpolation(_ value: some LogValue) {
            text += value.logText
        }
    }
}

/// Structured fields for one log entry or for every entry of a ``Logger``,
/// in insertion order; setting a field again replaces it.
public struct LogMetadata: ExpressibleByDictionaryLiteral, Sendable, Hashable, Sequence {
    private var storage: [(field: LogField, text: String)] = []

    /// No fields.
    public init() {}

    /// Fields from a literal such as `[.session: id, .uid: uid]`.
    public init(dictionaryLiteral elements: (LogField, any LogValue)...) {
        for (field, value) in elements { self[field] = value }
    }

    /// The text of `field`; set a ``LogValue`` to add or replace it, nil to remove it.
    public subscript(field: LogField) -> (any LogValue)? {
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
    public func text(of field: LogField) -> String? {
        storage.first { $0.field == field }?.text
    }

    /// True when no field is set.
    public var isEmpty: Bool { storage.isEmpty }

    /// The number of fields.
    public var count: Int { storage.count }

    /// These fields, then those of `other` (which win on the same field).
    public func merging(_ other: LogMetadata) -> LogMetadata {
        var result = self
        for (field, text) in other.storage { result[field] = text }
        return result
    }

    public func makeIterator() -> IndexingIterator<[(field: LogField, text: String)]> {
        storage.makeIterator()
    }

    public static func == (lhs: LogMetadata, rhs: LogMetadata) -> Bool {
        lhs.storage.elementsEqual(rhs.storage) { $0.field == $1.field && $0.text == $1.text }
    }

    public func hash(into hasher: inout Hasher) {
        for (field, text) in storage {
            hasher.combine(field)
            hasher.combine(text)
        }
    }
}
