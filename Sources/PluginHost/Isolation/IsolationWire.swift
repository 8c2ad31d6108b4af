import FlowKit
import FlowdSystem
import FoundationEssentials

// The protocol between flowd and `flowd-plugin-host`, the helper process an
// isolated plugin runs in: frames over a socketpair, each a 4-byte
// big-endian length and that many bytes of JSON. flowd sends calls and
// cancellations; the helper sends its registration once, then results in
// any order (calls run concurrently), each tagged with its call's id.
//
// FlowKit's values travel in tagged mirrors (`WireAnswer`, `WireJSON`), not
// in their own JSON forms: those are made for flow files and would turn a
// number 2.0 into an integer 2, or a string "NaN" into a number. Non-finite
// numbers travel as the strings "NaN", "Infinity" and "-Infinity" in number
// places only, so a receipt holding one reaches flowd as it left the plugin.
//
// New kinds of message (a plugin's log lines, a normalized value) are new
// cases and new optional fields: a decoder ignores fields it does not know,
// and both ends always come from the same build.

/// What flowd sends the helper.
package enum HostRequest: Codable, Sendable {
    /// Run a call; its result comes back with the same id.
    case call(WireCall)
    /// The call of this id was cancelled (a Cancel on a submit): cancel its task.
    case cancel(UInt64)
}

/// What the helper sends flowd.
package enum HostMessage: Codable, Sendable {
    /// The plugin loaded: its registration, as flowd registers it.
    case ready(WireRegistration)
    /// The plugin was refused (the loader's one-line reason).
    case refused(String)
    /// A call's outcome.
    case result(UInt64, WireOutcome)
    /// A line the plugin logged during the call of this id (SDK 1.1's
    /// `context.log`); sent before the call's result.
    case log(UInt64, PluginLogEntry)
}

/// One capability call, with everything the plugin's method gets.
package struct WireCall: Codable, Sendable {
    /// Which method of the capability, with its arguments.
    package enum Request: Codable, Sendable {
        case review(WireAnswer, WireField)
        case describeFieldRule(WireField)
        case validateStep(WireStep)
        case describeStepRule(WireStep)
        case submit(WireSubmission)
        case options(WireField)
        case prefill(WireField)
    }
    package var id: UInt64
    package var capability: String
    package var context: WireContext
    /// The time the call has, from when the helper starts it.
    package var timeoutNanoseconds: Int64
    package var request: Request
}

/// A registration, as the helper reads it from the plugin.
package struct WireRegistration: Codable, Sendable, Equatable {
    package struct Entry: Codable, Sendable, Equatable {
        package var kind: CapabilityKind
        package var name: String
        /// The options it declares; nil when it declares none.
        package var options: [WireOption]?
    }
    package var name: String
    package var version: String
    package var abiVersion: UInt32
    package var capabilities: [Entry]
}

/// A ``FlowKit/PluginOption``.
package struct WireOption: Codable, Sendable, Equatable {
    package var name: String
    package var type: String
    package var required: Bool

    package init(_ option: PluginOption) {
        name = option.name
        type = option.type.rawValue
        required = option.required
    }

    package var option: PluginOption? {
        PluginOptionType(rawValue: type).map { PluginOption(name: name, type: $0, required: required) }
    }
}

/// How a call ended in the helper: its value, or ``PluginCallResult``'s other cases.
package enum WireOutcome: Codable, Sendable {
    /// A field validator's review: its assessment (FlowKit's own Codable
    /// form: plain strings), and the value cleaned up when it gives one.
    case review(FieldAssessment, WireAnswer?)
    case issues([WireIssue])
    case text(String?)
    case receipt([String: WireJSON])
    case options([ChoiceOption])
    case prefill(WireAnswer?)
    case failure(message: String?, detail: String)
    case timedOut
    case cancelled
    case unavailable
}

/// A ``FlowKit/ValidationIssue``.
package struct WireIssue: Codable, Sendable {
    package var field: String?
    package var message: String
    package var level: IssueLevel
}

/// A ``FlowKit/AnswerValue``, tagged.
package enum WireAnswer: Codable, Sendable {
    case text(String)
    case list([String])
    case bool(Bool)
    case integer(Int64)
    case number(Double)

    package init(_ value: AnswerValue) {
        switch value {
        case .text(let s): self = .text(s)
        case .list(let l): self = .list(l)
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        }
    }

    package var value: AnswerValue {
        switch self {
        case .text(let s): return .text(s)
        case .list(let l): return .list(l)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .number(let d): return .number(d)
        }
    }
}

/// A ``FlowKit/JSONValue``, tagged.
package indirect enum WireJSON: Codable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([WireJSON])
    case object([String: WireJSON])

    package init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let d): self = .number(d)
        case .string(let s): self = .string(s)
        case .array(let a): self = .array(a.map(WireJSON.init))
        case .object(let o): self = .object(o.mapValues(WireJSON.init))
        }
    }

    package var value: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let d): return .number(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.value))
        case .object(let o): return .object(o.mapValues(\.value))
        }
    }
}

/// A ``FlowKit/PluginContext`` without its deadline (each side has its own
/// clock reading: the helper counts ``WireCall/timeoutNanoseconds`` from
/// when it starts the call).
package struct WireContext: Codable, Sendable {
    package var flowID: String
    package var sessionID: String
    package var locale: String
    package var callerUID: UInt32
    package var answers: [String: WireAnswer]
    package var options: [String: WireJSON]
    package var stateDirectory: String

    package init(_ c: PluginContext) {
        flowID = c.flowID
        sessionID = c.sessionID
        locale = c.locale
        callerUID = c.callerUID
        answers = c.answers.mapValues(WireAnswer.init)
        options = c.options.mapValues(WireJSON.init)
        stateDirectory = c.stateDirectory
    }

    package var context: PluginContext {
        PluginContext(
            flowID: flowID, sessionID: sessionID, locale: locale, callerUID: callerUID,
            answers: answers.mapValues(\.value), options: options.mapValues(\.value), stateDirectory: stateDirectory)
    }
}

/// A ``FlowKit/FieldInfo``.
package struct WireField: Codable, Sendable {
    package var id: String
    package var type: String
    package var label: String

    package init(_ f: FieldInfo) {
        id = f.id
        type = f.type
        label = f.label
    }

    package var field: FieldInfo { FieldInfo(id: id, type: type, label: label) }
}

/// A ``FlowKit/StepInfo``.
package struct WireStep: Codable, Sendable {
    package var id: String
    package var title: String
    package var fields: [WireField]

    package init(_ s: StepInfo) {
        id = s.id
        title = s.title
        fields = s.fields.map(WireField.init)
    }

    package var step: StepInfo { StepInfo(id: id, title: title, fields: fields.map(\.field)) }
}

/// A ``FlowKit/Submission``, secure answers included: they cross a socketpair
/// between two processes of the same service, never a disk or a log.
package struct WireSubmission: Codable, Sendable {
    package var id: String
    package var flowID: String
    package var sessionID: String
    package var ownerUID: UInt32
    package var locale: String
    package var answers: [String: WireAnswer]
    package var secureAnswers: [String: String]
    package var submittedAt: Int64

    package init(_ s: Submission) {
        id = s.id
        flowID = s.flowID
        sessionID = s.sessionID
        ownerUID = s.ownerUID
        locale = s.locale
        answers = s.answers.mapValues(WireAnswer.init)
        secureAnswers = s.secureAnswers
        submittedAt = s.submittedAt
    }

    package var submission: Submission {
        Submission(
            id: id, flowID: flowID, sessionID: sessionID, ownerUID: ownerUID, locale: locale,
            answers: answers.mapValues(\.value), secureAnswers: secureAnswers, submittedAt: submittedAt)
    }
}

/// A frame that could not be read or written: the other side is gone or
/// speaks something else. Either way the connection is over.
package struct WireError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Reads and writes frames on one end of the socketpair.
package enum WireFrames {
    /// The largest frame either side accepts (a plugin's answer is bounded
    /// far below this by ``PluginCaller/Limits``; this bounds a broken peer).
    package static let maxFrameBytes = 16 << 20

    /// Encodes `message` as one frame.
    package static func encode<Message: Encodable>(_ message: Message) throws(WireError) -> [UInt8] {
        let body: Data
        do {
            body = try encoder.encode(message)
        } catch {
            throw WireError("cannot encode a message: \(error)")
        }
        guard body.count <= maxFrameBytes else { throw WireError("a message of \(body.count) bytes is too long") }
        let n = UInt32(body.count)
        return [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            + Array(body)
    }

    /// Decodes a frame's body.
    package static func decode<Message: Decodable>(_ type: Message.Type, from body: [UInt8]) throws(WireError) -> Message {
        do {
            return try decoder.decode(type, from: Data(body))
        } catch {
            throw WireError("cannot decode a message: \(error)")
        }
    }

    /// Reads one frame's body from `fd`, blocking; nil at the end of the stream.
    package static func read(from fd: FileDescriptor) throws(WireError) -> [UInt8]? {
        guard let header = try readExactly(4, from: fd) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= maxFrameBytes else { throw WireError("a frame of \(length) bytes is too long") }
        guard let body = try readExactly(length, from: fd) else { throw WireError("the stream ended inside a frame") }
        return body
    }

    /// Exactly `count` bytes; nil when the stream ends (or is reset) first.
    private static func readExactly(_ count: Int, from fd: FileDescriptor) throws(WireError) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        var buffer = [UInt8](repeating: 0, count: min(max(count, 1), 65536))
        while result.count < count {
            let want = min(buffer.count, count - result.count)
            if buffer.count != want { buffer = [UInt8](repeating: 0, count: want) }
            let n: Int
            do {
                n = try fd.read(into: &buffer)
            } catch {
                // A peer that died with data unread resets the connection.
                if error.errno == .connectionReset { return nil }
                throw WireError("read: \(error.errno)")
            }
            if n == 0 { return nil }
            result += buffer.prefix(n)
        }
        return result
    }

    private static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return e
    }

    private static var decoder: JSONDecoder {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return d
    }
}
