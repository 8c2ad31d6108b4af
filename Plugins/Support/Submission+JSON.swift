import FlowKit
import Foundation

/// The one JSON shape every shipped submit action hands on: the spool file,
/// the command's standard input and the webhook's body.
///
/// ```json
/// {"id": "…", "flow": "consultation", "session": "…", "owner": 1000, "locale": "en",
///  "submittedAt": "2024-06-01T09:30:00Z", "answers": {"name": "Ada", "day": "2024-06-03"}}
/// ```
///
/// Secure answers are left out unless the flow's options say
/// `"includeSecure": true`; then they appear in `answers` like any text.
package struct SubmissionDocument: Encodable {
    package var id: String
    package var flow: String
    package var session: String
    package var owner: UInt32
    package var locale: String
    package var submittedAt: String
    package var answers: [String: AnswerValue]

    package init(_ submission: Submission, includeSecure: Bool) {
        id = submission.id
        flow = submission.flowID
        session = submission.sessionID
        owner = submission.ownerUID
        locale = submission.locale
        submittedAt = RFC3339.format(microseconds: submission.submittedAt)
        var all = submission.answers
        if includeSecure {
            for (key, value) in submission.secureAnswers { all[key] = .text(value) }
        }
        answers = all
    }

    /// The document as UTF-8 JSON with sorted keys (stable bytes for the same
    /// submission, so a retried spool write is byte-identical).
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// RFC 3339 timestamps in UTC.
package enum RFC3339 {
    /// `2024-06-01T09:30:00Z` for microseconds since the epoch (whole seconds).
    package static func format(microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
