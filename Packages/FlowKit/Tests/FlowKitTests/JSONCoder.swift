import Foundation

/// Test-only JSON helpers (FlowKit itself does not depend on Foundation).
enum JSONCoder {
    /// Compact JSON with sorted keys, so tests can compare the text.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try JSONDecoder().decode(type, from: data) }
}
