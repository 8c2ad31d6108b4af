import FlowKit

/// A parsed JSON value as the flow loader sees it.
///
/// Unlike `FlowKit.JSONValue` it keeps the order of object members (a localized
/// string falls back to its *first* translation) and tells an integer literal
/// from a fraction (`"minLength": 2.5` is an error, not a silent 2).
enum JSONNode: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A literal without fraction or exponent that fits `Int64`.
    case integer(Int64)
    /// Any other finite number.
    case number(Double)
    case string(String)
    case array([JSONNode])
    /// Members in document order. Duplicate keys are reported by the parser.
    case object([JSONMember])

    /// What a person calls this kind of value in an error message.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The same value as a FlowKit `JSONValue`, which is what plugins receive.
    var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.jsonValue))
        case .object(let members):
            var o: [String: JSONValue] = [:]
            for m in members { o[m.key] = m.value.jsonValue }
            return .object(o)
        }
    }
}

/// One `"key": value` member of a JSON object.
struct JSONMember: Sendable, Hashable {
    var key: String
    var value: JSONNode
}

// MARK: - Fingerprint

extension JSONNode {
    /// A 64-bit FNV-1a hash over the structure and content, as 16 hex digits.
    ///
    /// Two documents that differ only in whitespace or escapes get the same
    /// fingerprint; any change of a key, a value or the member order changes it.
    var fingerprint: String {
        var h = FNV1a()
        hash(into: &h)
        let hex = String(h.value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    private func hash(into h: inout FNV1a) {
        switch self {
        case .null: h.add(0x6E)
        case .bool(let b): h.add(b ? 0x74 : 0x66)
        case .integer(let i):
            h.add(0x69)
            h.add(String(i))
        case .number(let d):
            h.add(0x64)
            h.add(d.description)
        case .string(let s):
            h.add(0x73)
            h.add(s)
        case .array(let a):
            h.add(0x5B)
            for e in a { e.hash(into: &h) }
            h.add(0x5D)
        case .object(let members):
            h.add(0x7B)
            for m in members {
                h.add(m.key)
                m.value.hash(into: &h)
            }
            h.add(0x7D)
        }
    }
}

/// The 64-bit Fowler–Noll–Vo 1a hash: tiny, stable across runs and platforms
/// (unlike `Hasher`, which is seeded per process).
private struct FNV1a {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01B3
    }

    mutating func add(_ s: String) {
        for b in s.utf8 { add(b) }
        add(0)  // a terminator, so "ab","c" and "a","bc" differ
    }
}

// MARK: - Codable bridge

/// Coding keys for arbitrary object members.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension JSONNode: Encodable {
    func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for e in a { try c.encode(e) }
        case .object(let members):
            var c = encoder.container(keyedBy: AnyCodingKey.self)
            for m in members { try c.encode(m.value, forKey: AnyCodingKey(stringValue: m.key)) }
        case .null, .bool, .integer, .number, .string:
            var c = encoder.singleValueContainer()
            switch self {
            case .bool(let b): try c.encode(b)
            case .integer(let i): try c.encode(i)
            case .number(let d): try c.encode(d)
            case .string(let s): try c.encode(s)
            default: try c.encodeNil()
            }
        }
    }
}

extension JSONNode {
    /// Reads any value from a `Decoder`, refusing nesting deeper than `maxDepth`
    /// so that a hostile document cannot recurse without bound.
    static func decode(from decoder: any Decoder, maxDepth: Int) throws -> JSONNode {
        if decoder.codingPath.count > maxDepth {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "nesting deeper than \(maxDepth) levels"))
        }
        if let c = try? decoder.singleValueContainer() {
            if c.decodeNil() { return .null }
            if let b = try? c.decode(Bool.self) { return .bool(b) }
            if let i = try? c.decode(Int64.self) { return .integer(i) }
            if let d = try? c.decode(Double.self) { return .number(d) }
            if let s = try? c.decode(String.self) { return .string(s) }
        }
        if let keyed = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members: [JSONMember] = []
            for key in keyed.allKeys {
                let sub = try keyed.superDecoder(forKey: key)
                members.append(JSONMember(key: key.stringValue, value: try decode(from: sub, maxDepth: maxDepth)))
            }
            return .object(members)
        }
        var unkeyed = try decoder.unkeyedContainer()
        var items: [JSONNode] = []
        while !unkeyed.isAtEnd {
            let sub = try unkeyed.superDecoder()
            items.append(try decode(from: sub, maxDepth: maxDepth))
        }
        return .array(items)
    }
}
