/// The start page: the flows to begin and the person's unfinished sessions.
package struct StartScreen: Sendable, Hashable {
    package var flows: [FlowEntry]
    package var sessions: [SessionEntry]

    package init(flows: [FlowEntry], sessions: [SessionEntry]) {
        self.flows = flows
        self.sessions = sessions
    }
}

/// A flow that can be started (`ListFlows`, title and description in the person's language).
package struct FlowEntry: Sendable, Hashable {
    package var id: String
    package var title: String
    package var description: String

    package init(id: String, title: String, description: String) {
        self.id = id
        self.title = title
        self.description = description
    }
}

/// An unfinished session: "Book a consultation, Step 3 of 4 · Contact details, changed 5 minutes ago".
package struct SessionEntry: Sendable, Hashable {
    package var id: String
    package var flowTitle: String
    /// The daemon's "Step 3 of 4".
    package var progressLabel: String
    /// The current step's title.
    package var stepTitle: String
    /// `UpdatedAt`: microseconds since the epoch.
    package var updatedAt: UInt64

    package init(id: String, flowTitle: String, progressLabel: String, stepTitle: String, updatedAt: UInt64) {
        self.id = id
        self.flowTitle = flowTitle
        self.progressLabel = progressLabel
        self.stepTitle = stepTitle
        self.updatedAt = updatedAt
    }
}
