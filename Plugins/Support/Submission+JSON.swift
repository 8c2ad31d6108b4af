import FlowKit
import FlowdSystem
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
        // RFC 3339 in UTC, whole seconds: `2024-06-01T09:30:00Z`.
        submittedAt = CalendarTime.utc(microsecondsSinceEpoch: submission.submittedAt)?.rfc3339UTC ?? "1970-01-01T00:00:00Z"
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
