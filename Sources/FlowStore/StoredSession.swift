/// One session as the store keeps it: the columns the store indexes and the
/// daemon's own encoding of everything else.
///
/// The store never looks inside ``payload``. The daemon is responsible for
/// keeping values of `secure` fields out of it (they must never reach disk).
package struct StoredSession: Hashable, Sendable {
    /// The session id (32 lowercase hex characters in flowd; any non-empty text here).
    package var id: String
    /// The uid that created the session. Fixed at the first upsert.
    package var owner: UInt32
    /// The id of the flow the session runs. Fixed at the first upsert.
    package var flowID: String
    /// The session's state name (`editing`, `submitting`, …), indexed so the
    /// daemon can find interrupted submits at start-up.
    package var state: String
    /// Creation time in microseconds since the Unix epoch. Fixed at the first upsert.
    package var createdAt: Int64
    /// Time of the last change in microseconds since the Unix epoch; drives expiry.
    package var updatedAt: Int64
    /// The version of the daemon's payload encoding, so a later daemon can
    /// migrate payloads it reads without guessing.
    package var payloadVersion: Int
    /// The daemon's encoded session record; opaque to the store.
    package var payload: [UInt8]

    /// A session record; ``payloadVersion`` defaults to 1.
    package init(
        id: String, owner: UInt32, flowID: String, state: String,
        createdAt: Int64, updatedAt: Int64, payloadVersion: Int = 1, payload: [UInt8]
    ) {
        self.id = id
        self.owner = owner
        self.flowID = flowID
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.payloadVersion = payloadVersion
        self.payload = payload
    }

    /// The indexed columns, without the payload.
    package var summary: SessionSummary {
        SessionSummary(id: id, flowID: flowID, state: state, owner: owner, createdAt: createdAt, updatedAt: updatedAt)
    }
}

/// What listing sessions needs, read without touching payloads.
package struct SessionSummary: Hashable, Sendable {
    /// The session id.
    package var id: String
    /// The id of the flow the session runs.
    package var flowID: String
    /// The session's state name.
    package var state: String
    /// The uid that owns the session.
    package var owner: UInt32
    /// Creation time in microseconds since the Unix epoch.
    package var createdAt: Int64
    /// Time of the last change in microseconds since the Unix epoch.
    package var updatedAt: Int64

    /// A summary with every column given.
    package init(id: String, flowID: String, state: String, owner: UInt32, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.flowID = flowID
        self.state = state
        self.owner = owner
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Where the store keeps a session's row (its SQLite rowid), handed out by
/// ``SessionStore/loadRow(id:)`` and ``SessionStore/upsert(_:row:)`` so that
/// the session's next change finds the row without the primary key's index.
///
/// Only a hint: the store checks the id on the row too, and a row that is
/// no longer the session's costs one statement more, never a wrong change.
package struct StoredRow: Sendable, Hashable {
    /// The row's `rowid`.
    let rowID: Int64
}
