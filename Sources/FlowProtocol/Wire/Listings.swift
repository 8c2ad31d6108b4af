import DBus
import FlowEngine

/// One flow the daemon serves: an entry of `ListFlows`.
package struct FlowSummary: Sendable, Hashable {
    /// The flow id.
    package var id: String
    /// The title in the flow's default locale.
    package var title: String
    /// Every translation of the title, locale → text.
    package var titles: [String: String]
    /// A line about the flow in its default locale, or empty.
    package var description: String
    /// Since 1.1: every translation of the description, locale → text
    /// (empty when the flow has none, or from a 1.0 daemon).
    package var descriptions: [String: String]
    /// The locales the flow has texts in.
    package var locales: [String]
    /// The number of steps in the document.
    package var steps: Int
    /// The flow ends with Review.
    package var review: Bool
    /// Since 1.1, from `ListFlowsWithOptions` only: the flow locale
    /// ``title`` and ``description`` are in (the requested one, resolved).
    /// Empty from `ListFlows`, whose texts are in the default locale.
    package var locale = ""

    /// A flow summary with every key given.
    package init(
        id: String, title: String, titles: [String: String] = [:], description: String = "",
        descriptions: [String: String] = [:], locales: [String] = [], steps: Int = 0, review: Bool = false
    ) {
        self.id = id
        self.title = title
        self.titles = titles
        self.description = description
        self.descriptions = descriptions
        self.locales = locales
        self.steps = steps
        self.review = review
    }

    /// The daemon's side: the summary of `flow`.
    package init(_ flow: FlowDefinition) {
        let locale = flow.locales.first ?? "en"
        self.init(
            id: flow.id, title: flow.title.resolve(locale), titles: Self.byLocale(flow.title),
            description: flow.description?.resolve(locale) ?? "",
            descriptions: flow.description.map(Self.byLocale) ?? [:], locales: flow.locales, steps: flow.steps.count,
            review: flow.hasReview)
    }

    /// The daemon's side: the summary of `flow` with its title and
    /// description in `requested` (`ListFlowsWithOptions`).
    package init(_ flow: FlowDefinition, locale requested: String) {
        self.init(flow)
        let localized = flow.summary(locale: requested)
        title = localized.title
        description = localized.description
        locale = localized.locale
    }

    /// Every translation of `text`; a plain string is the English one.
    private static func byLocale(_ text: LocalizedText) -> [String: String] {
        var texts: [String: String] = [:]
        for t in text.translations { texts[t.locale] = t.text }
        if let plain = text.plain { texts["en"] = texts["en"] ?? plain }
        return texts
    }

    /// The title in `locale`, with the usual fallback (`pt-BR → pt → en → first`).
    package func title(in locale: String) -> String { Self.text(in: locale, of: titles) ?? title }

    /// The description in `locale`, with the same fallback as ``title(in:)``.
    package func description(in locale: String) -> String { Self.text(in: locale, of: descriptions) ?? description }

    private static func text(in locale: String, of texts: [String: String]) -> String? {
        let keys = texts.keys.sorted()
        guard let index = LocaleFallback.bestMatch(for: locale, in: keys) else { return nil }
        return texts[keys[index]]
    }

    /// The encoder: one `a{sv}` of `ListFlows`.
    package var dbusValue: DBusValue {
        var entries: [String: DBusValue] = [
            "id": .string(id), "title": .string(title), "titles": .stringDictionary(titles),
            "description": .string(description), "descriptions": .stringDictionary(descriptions),
            "locales": .strings(locales),
            "steps": .uint32(UInt32(clamping: steps)), "review": .bool(review),
        ]
        if !locale.isEmpty { entries["locale"] = .string(locale) }
        return .vardict(entries)
    }

    /// The decoder of one `a{sv}` of `ListFlows`.
    package init(dbusValue: DBusValue) throws(WireError) {
        let d = try WireDictionary(dbusValue, "a ListFlows entry")
        self.init(
            id: try d.required("id"), title: try d.required("title"), titles: try d.required("titles"),
            description: try d.required("description"), descriptions: try d.optional("descriptions") ?? [:],
            locales: try d.required("locales"), steps: try d.count("steps"), review: try d.required("review"))
        locale = try d.optional("locale") ?? ""
    }
}

/// One plugin the daemon knows: an entry of `ListPlugins`. The daemon
/// builds it from the loader's record.
package struct PluginSummary: Sendable, Hashable {
    /// Whether the plugin is in use.
    package enum Status: String, Sendable, Hashable, CaseIterable {
        case loaded, failed, disabled
    }

    /// The plugin's name.
    package var name: String
    /// Its version; empty when unknown.
    package var version: String
    /// What it provides (`validator`, `submit`, `options`, `prefill`), sorted.
    package var kinds: [String]
    /// The dotted capability names it registers.
    package var capabilities: [String]
    /// The file it was loaded from.
    package var path: String
    /// Loaded, failed or disabled.
    package var status: Status
    /// Why it is not loaded; empty when loaded.
    package var error: String

    /// A plugin entry.
    package init(
        name: String, version: String, kinds: [String], capabilities: [String] = [], path: String = "",
        status: Status, error: String = ""
    ) {
        self.name = name
        self.version = version
        self.kinds = kinds
        self.capabilities = capabilities
        self.path = path
        self.status = status
        self.error = error
    }

    /// The encoder: one `a{sv}` of `ListPlugins`.
    package var dbusValue: DBusValue {
        .vardict([
            "name": .string(name), "version": .string(version), "kinds": .strings(kinds),
            "capabilities": .strings(capabilities), "path": .string(path), "status": .string(status.rawValue),
            "error": .string(error),
        ])
    }

    /// The decoder of one `a{sv}` of `ListPlugins`.
    package init(dbusValue: DBusValue) throws(WireError) {
        let d = try WireDictionary(dbusValue, "a ListPlugins entry")
        self.init(
            name: try d.required("name"), version: try d.required("version"), kinds: try d.required("kinds"),
            capabilities: try d.required("capabilities"), path: try d.required("path"),
            status: try d.name("status", Status.self), error: try d.required("error"))
    }
}

/// One of the caller's sessions: an entry of `ListSessions`, `(ssos)`.
package struct SessionListing: Sendable, Hashable {
    /// The session id.
    package var id: String
    /// The flow it runs.
    package var flowID: String
    /// Its object path.
    package var path: ObjectPath
    /// Its state.
    package var state: SessionState

    /// The listing of session `id`; its path follows from the id.
    package init?(id: String, flowID: String, state: SessionState) {
        guard let path = FlowBus.sessionPath(of: id) else { return nil }
        self.init(id: id, flowID: flowID, path: path, state: state)
    }

    private init(id: String, flowID: String, path: ObjectPath, state: SessionState) {
        self.id = id
        self.flowID = flowID
        self.path = path
        self.state = state
    }

    /// The D-Bus type of one entry.
    package static let signature: Signature = "(ssos)"

    /// The encoder: one `(ssos)`.
    package var dbusValue: DBusValue {
        .structure([.string(id), .string(flowID), .objectPath(path), .string(state.rawValue)])
    }

    /// The decoder of one `(ssos)`.
    package init(dbusValue: DBusValue) throws(WireError) {
        let entry = try WireDictionary.typed(
            dbusValue, DBusStruct<String, String, ObjectPath, String>.self, "a ListSessions entry")
        let (id, flowID, path, stateName) = entry.fields
        guard let state = SessionState(rawValue: stateName) else {
            throw WireError("the ListSessions entry of \(id.prefix(64)) has the state \"\(stateName.prefix(64))\"")
        }
        self.init(id: id, flowID: flowID, path: path, state: state)
    }
}
