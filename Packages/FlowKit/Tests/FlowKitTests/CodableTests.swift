import FlowKit
import Foundation
import Testing

/// Every public FlowKit value that is `Codable` survives a JSON round trip, and
/// encodes as the plain JSON the docs promise (spool files, webhooks and the
/// daemon's records rely on those shapes).
@Suite struct CodableRoundTrips {
    /// Encodes, checks the JSON text, decodes, and expects the same value.
    func roundTrip<T: Codable & Equatable>(_ value: T, json: String) throws {
        let encoded = try JSONCoder.encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == json)
        #expect(try JSONCoder.decode(T.self, from: encoded) == value)
    }

    @Test func answerValues() throws {
        try roundTrip(AnswerValue.text("héllo"), json: #""héllo""#)
        try roundTrip(AnswerValue.list(["a", "b"]), json: #"["a","b"]"#)
        try roundTrip(AnswerValue.list([]), json: "[]")
        try roundTrip(AnswerValue.bool(false), json: "false")
        try roundTrip(AnswerValue.integer(-42), json: "-42")
        try roundTrip(AnswerValue.integer(.max), json: "9223372036854775807")
        try roundTrip(AnswerValue.number(2.5), json: "2.5")
    }

    @Test func answerValuesRefuseOtherJSON() {
        for json in ["null", #"{"a":1}"#, "[1,2]", #"["a",true]"#] {
            #expect(throws: DecodingError.self, "\(json)") {
                try JSONCoder.decode(AnswerValue.self, from: Data(json.utf8))
            }
        }
    }

    @Test func jsonValues() throws {
        try roundTrip(JSONValue.null, json: "null")
        try roundTrip(JSONValue.bool(true), json: "true")
        try roundTrip(JSONValue.number(1.5), json: "1.5")
        try roundTrip(JSONValue.string("x"), json: #""x""#)
        try roundTrip(JSONValue.array([1, "a", nil, false]), json: #"[1,"a",null,false]"#)
        let nested: JSONValue = ["list": [["deep": true]]]
        try roundTrip(nested, json: #"{"list":[{"deep":true}]}"#)
        #expect(nested["list"]?.arrayValue?.first?["deep"]?.boolValue == true)
    }

    @Test func choiceOptions() throws {
        try roundTrip(ChoiceOption(id: "a", label: "Alpha", icon: "go-next"), json: #"{"icon":"go-next","id":"a","label":"Alpha"}"#)
        try roundTrip(ChoiceOption(id: "b", label: "Beta"), json: #"{"id":"b","label":"Beta"}"#)
        #expect(throws: DecodingError.self) {
            try JSONCoder.decode(ChoiceOption.self, from: Data(#"{"id":"a"}"#.utf8))
        }
    }

    @Test func capabilityKinds() throws {
        for kind in CapabilityKind.allCases {
            try roundTrip(kind, json: "\"\(kind.rawValue)\"")
        }
        #expect(throws: DecodingError.self) {
            try JSONCoder.decode(CapabilityKind.self, from: Data(#""submit""#.utf8))
        }
    }

    @Test func civilDatesAsISOStrings() throws {
        try roundTrip(date("2024-02-29"), json: #""2024-02-29""#)
        try roundTrip(CivilDate.earliest, json: #""0001-01-01""#)
        try roundTrip([date("1999-12-31")], json: #"["1999-12-31"]"#)
    }

    @Test("decoding refuses a date that does not exist", arguments: [#""2023-02-29""#, #""2024-13-01""#, #""2024-1-1""#, "20240101", "null"])
    func civilDateRefusals(json: String) {
        #expect(throws: DecodingError.self) { try JSONCoder.decode(CivilDate.self, from: Data(json.utf8)) }
    }

    @Test func civilTimesAsISOStrings() throws {
        try roundTrip(try #require(CivilTime(iso: "07:45")), json: #""07:45""#)
        for json in [#""24:00""#, #""7:45""#, "445"] {
            #expect(throws: DecodingError.self, "\(json)") { try JSONCoder.decode(CivilTime.self, from: Data(json.utf8)) }
        }
    }
}
