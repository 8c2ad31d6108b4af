import FlowKit

/// Everything about a session that survives a daemon restart.
///
/// The store persists it (the daemon encodes it, for example as JSON). It
/// cannot hold a secure value *by construction*: secure answers never enter
/// ``answers`` — ``FlowSession`` keeps them in a separate type that is not
/// `Codable`. Only the ids of secure fields that had a value are kept, so a
/// restore knows which steps must be filled in again.
package struct SessionRecord: Sendable, Hashable, Codable {
    /// The version of this record's layout. Bump it on any incompatible change.
    package static let currentFormatVersion = 1

    /// The layout version; ``currentFormatVersion`` when written by this engine.
    package internal(set) var formatVersion: Int
    /// 32 lowercase hex characters, chosen by the daemon.
    package internal(set) var id: String
    /// The id of the flow the session runs.
    package internal(set) var flowID: String
    /// ``FlowDefinition/fingerprint`` of the flow the session last ran with.
    package internal(set) var flowFingerprint: String
    /// The uid that owns the session.
    package internal(set) var owner: UInt32
    /// The session's locale, normalized (`pt_BR` becomes `pt-BR`).
    package internal(set) var locale: String
    /// Microseconds since the epoch.
    package internal(set) var createdAt: Int64
    /// The time of the last change, in microseconds since the epoch.
    package internal(set) var updatedAt: Int64
    /// Counts changes of the answers; plugin results are tied to it.
    package internal(set) var revision: UInt64
    /// `editing`, `review`, `submitting`, `submitted` or `failed`.
    package internal(set) var state: SessionState
    /// A step id, `review` or `complete`.
    package internal(set) var currentStep: String
    /// Edit came from Review: Continue goes back there once nothing on the
    /// way is unfinished.
    package internal(set) var returningToReview: Bool
    /// Steps the person has been on, in the order first reached.
    package internal(set) var visited: [String]
    /// Steps that Continue accepted with their current answers (sorted).
    package internal(set) var completed: [String]
    /// Fields whose errors are shown: set at least once, or on a step where
    /// Continue was tried (sorted).
    package internal(set) var shownErrors: [String]
    /// Non-secure answers, including `<field>.other` texts and answers on
    /// abandoned branches (kept so they come back).
    package internal(set) var answers: [String: AnswerValue]
    /// Ids of secure fields that held a value (never the value).
    package internal(set) var secureFieldsSet: [String]
    /// Options from `optionsFrom` providers, by field.
    package internal(set) var dynamicOptions: [String: [ChoiceOption]]
    /// Messages plugin step validators returned on the last Continue, by step
    /// then field (`""` for the step), valid while `revision` is unchanged.
    package internal(set) var stepMessages: [String: StepMessages]
    /// The localized message of the last failed submit.
    package internal(set) var lastError: String?
    /// The last announcement (a step arrived, a submit started, ended or was
    /// cancelled).
    package internal(set) var announcement: String
    /// How many announcements the session has made: every event that
    /// announces adds one, so a host signals exactly one `Announcement` per
    /// event, even when two in a row say the same words, and none when only
    /// the words change (``FlowSession/setLocale(_:now:)`` rewords the last
    /// one). Records written before it existed read as 0.
    package internal(set) var announcementSequence: UInt64 = 0
    /// The warnings of the current step already announced, field id (or
    /// `""`) → message: a warning is announced once, when it appears.
    /// Records written before flowd 1.1 read as none.
    package internal(set) var announcedWarnings: [String: String] = [:]
    /// The receipt of the successful submit.
    package internal(set) var receipt: [String: JSONValue]?
    /// When the (last) submit began, in microseconds since the epoch.
    package internal(set) var submittedAt: Int64?

    /// Plugin step messages for one step at one revision.
    package struct StepMessages: Sendable, Hashable, Codable {
        /// The session revision the messages were computed at.
        package var revision: UInt64
        /// Field id (or `""`) → message.
        package var messages: [String: String]
        /// Field id (or `""`) → warning (since flowd 1.1).
        package var warnings: [String: String] = [:]
    }
}

extension SessionRecord.StepMessages {
    private enum Keys: String, CodingKey { case revision, messages, warnings }

    /// Reads step messages as the synthesized encoder writes them; records
    /// written before warnings existed have none.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        revision = try c.decode(UInt64.self, forKey: .revision)
        messages = try c.decode([String: String].self, forKey: .messages)
        warnings = try c.decodeIfPresent([String: String].self, forKey: .warnings) ?? [:]
    }
}

extension SessionRecord {
    /// Reads a record as the synthesized `Codable` conformance writes it.
    /// Written out so that fields added since format 1 began have defaults:
    /// a record stored by an older flowd (without them) still reads.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try c.decode(Int.self, forKey: .formatVersion)
        id = try c.decode(String.self, forKey: .id)
        flowID = try c.decode(String.self, forKey: .flowID)
        flowFingerprint = try c.decode(String.self, forKey: .flowFingerprint)
        owner = try c.decode(UInt32.self, forKey: .owner)
        locale = try c.decode(String.self, forKey: .locale)
        createdAt = try c.decode(Int64.self, forKey: .createdAt)
        updatedAt = try c.decode(Int64.self, forKey: .updatedAt)
        revision = try c.decode(UInt64.self, forKey: .revision)
        state = try c.decode(SessionState.self, forKey: .state)
        currentStep = try c.decode(String.self, forKey: .currentStep)
        returningToReview = try c.decode(Bool.self, forKey: .returningToReview)
        visited = try c.decode([String].self, forKey: .visited)
        completed = try c.decode([String].self, forKey: .completed)
        shownErrors = try c.decode([String].self, forKey: .shownErrors)
        answers = try c.decode([String: AnswerValue].self, forKey: .answers)
        secureFieldsSet = try c.decode([String].self, forKey: .secureFieldsSet)
        dynamicOptions = try c.decode([String: [ChoiceOption]].self, forKey: .dynamicOptions)
        stepMessages = try c.decode([String: StepMessages].self, forKey: .stepMessages)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        announcement = try c.decode(String.self, forKey: .announcement)
        receipt = try c.decodeIfPresent([String: JSONValue].self, forKey: .receipt)
        submittedAt = try c.decodeIfPresent(Int64.self, forKey: .submittedAt)
        // Added in flowd 1.1.
        announcementSequence = try c.decodeIfPresent(UInt64.self, forKey: .announcementSequence) ?? 0
        announcedWarnings = try c.decodeIfPresent([String: String].self, forKey: .announcedWarnings) ?? [:]
    }
}
