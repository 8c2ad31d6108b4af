import Foundation

/// Test-only JSON helpers (FlowKit itself does not depend on Foundation).
enum JSONCoder {
    static func encode<T: Encodable>(_ value: T) throws -> Data { try JSONEncoder().encode(value) }
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try JSONDecoder().decode(type, from: data) }
}
