import DBus

/// Typed, lenient reads from an `a{sv}` reply: a missing key or one of an
/// unexpected type reads as the empty value, so a daemon that adds keys (or
/// leaves optional ones out) never breaks flowctl.
struct VarDict {
    let entries: [String: DBusValue]

    init(_ entries: [String: DBusValue]) { self.entries = entries }

    func string(_ key: String) -> String { entries[key]?.string ?? "" }
    func bool(_ key: String) -> Bool { entries[key]?.bool ?? false }
    func int(_ key: String) -> Int { entries[key]?.integer.map { Int(clamping: $0) } ?? 0 }
    func strings(_ key: String) -> [String] { entries[key]?.strings ?? [] }
    func dict(_ key: String) -> [String: DBusValue] { entries[key]?.vardict ?? [:] }
    func stringDict(_ key: String) -> [String: String] { entries[key]?.stringDictionary ?? [:] }

    /// The string fields of each struct in an `a(s…)` array.
    func stringTuples(_ key: String) -> [[String]] {
        (entries[key]?.elements ?? []).compactMap { element in
            element.fields?.map { $0.string ?? "" }
        }
    }

    /// Requires `key` to be a string: the keys a reply is useless without.
    func required(_ key: String, in what: String) throws(ServiceError) -> String {
        guard let value = entries[key]?.string else {
            throw ServiceError(.protocolMismatch, "flowd's \(what) reply has no \"\(key)\" string")
        }
        return value
    }
}

/// Builds flowctl's models from the replies of contract v1 (docs/dbus-api.md).
public enum ReplyDecoder {
    /// One dict of `ListFlows`.
    public static func flow(_ dict: [String: DBusValue]) throws(ServiceError) -> FlowSummary {
        let d = VarDict(dict)
        return FlowSummary(
            id: try d.required("id", in: "ListFlows"), title: d.string("title"), titles: d.stringDict("titles"),
            description: d.string("description"), locales: d.strings("locales"), steps: d.int("steps"),
            review: d.bool("review"))
    }

    /// One dict of `ListPlugins`.
    public static func plugin(_ dict: [String: DBusValue]) throws(ServiceError) -> PluginSummary {
        let d = VarDict(dict)
        return PluginSummary(
            name: try d.required("name", in: "ListPlugins"), version: d.string("version"), kinds: d.strings("kinds"),
            capabilities: d.strings("capabilities"), path: d.string("path"), status: d.string("status"),
            error: d.string("error"))
    }

    /// The `GetStep` reply.
    public static func step(_ dict: [String: DBusValue]) throws(ServiceError) -> StepPage {
        let d = VarDict(dict)
        var step = StepPage(id: try d.required("id", in: "GetStep"), kind: d.string("kind"), title: d.string("title"))
        step.description = d.string("description")
        step.body = d.string("body")
        step.icon = d.string("icon")
        step.error = d.string("error")
        step.announcement = d.string("announcement")
        step.index = d.int("index")
        step.count = d.int("count")
        step.continueLabel = d.string("continueLabel")
        step.backLabel = d.string("backLabel")
        step.canGoBack = d.bool("canGoBack")
        step.canContinue = d.bool("canContinue")
        for fieldDict in dict["fields"]?.vardicts ?? [] {
            step.fields.append(try field(fieldDict))
        }
        return step
    }

    /// One dict of `GetStep`'s `fields`.
    public static func field(_ dict: [String: DBusValue]) throws(ServiceError) -> StepField {
        let d = VarDict(dict)
        var field = StepField(id: try d.required("id", in: "GetStep field"), typeName: d.string("type"), label: d.string("label"))
        field.help = d.string("help")
        field.placeholder = d.string("placeholder")
        field.required = d.bool("required")
        field.options = d.stringTuples("options").compactMap { tuple in
            guard tuple.count >= 2 else { return nil }
            return FieldOption(id: tuple[0], label: tuple[1])
        }
        field.other = d.bool("other")
        field.otherLabel = d.string("otherLabel")
        field.value = dict["value"]
        field.otherText = (dict["otherValue"] ?? dict["otherText"])?.string
        field.isSet = dict["isSet"]?.bool ?? (field.value != nil)
        field.error = d.string("error")
        field.hint = d.string("hint")
        for key in StepField.constraintKeys {
            if let value = dict[key] { field.constraints[key] = value }
        }
        return field
    }

    /// The `GetReview` reply.
    public static func review(groups: [[String: DBusValue]], note: String) throws(ServiceError) -> ReviewPage {
        var sections: [ReviewSection] = []
        for group in groups {
            let d = VarDict(group)
            let lines = d.stringTuples("answers").compactMap { tuple -> ReviewLine? in
                guard tuple.count >= 3 else { return nil }
                return ReviewLine(field: tuple[0], label: tuple[1], display: tuple[2])
            }
            sections.append(ReviewSection(
                step: try d.required("step", in: "GetReview"), title: d.string("title"), finished: d.bool("finished"),
                status: d.string("status"), editLabel: d.string("editLabel"), answers: lines))
        }
        return ReviewPage(groups: sections, note: note)
    }

    /// The session's `GetAll` reply.
    public static func properties(_ dict: [String: DBusValue], id: String) -> SessionProperties {
        let d = VarDict(dict)
        var properties = SessionProperties(id: d.string("Id").isEmpty ? id : d.string("Id"), flow: d.string("FlowId"))
        properties.owner = dict["Owner"]?.uint32 ?? 0
        properties.locale = d.string("Locale").isEmpty ? "en" : d.string("Locale")
        properties.state = d.string("State")
        properties.currentStep = d.string("CurrentStep")
        properties.lastError = d.string("LastError")
        properties.path = d.stringTuples("Path").compactMap { tuple in
            tuple.count >= 3 ? PathStep(step: tuple[0], title: tuple[1], status: tuple[2]) : nil
        }
        properties.receipt = d.dict("Receipt")
        properties.createdAt = dict["CreatedAt"]?.uint64 ?? 0
        properties.updatedAt = dict["UpdatedAt"]?.uint64 ?? 0
        return properties
    }

    /// A session signal as an event; nil for a signal flowctl does not follow.
    public static func event(_ message: Message, sessionID: String) -> SessionEvent? {
        guard message.type == .signal, let member = message.member?.rawValue,
              let interface = message.interface?.rawValue else { return nil }
        var reader = message.arguments()
        switch (interface, member) {
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let name = try? reader.next(String.self), name == BusFlowService.sessionInterface.rawValue,
                  let changed = try? reader.next([String: DBusValue].self) else { return nil }
            let invalidated = (try? reader.next([String].self)) ?? []
            return .propertiesChanged(changed, invalidated: invalidated)
        case (BusFlowService.sessionInterface.rawValue, "StepCompleted"):
            guard let step = try? reader.next(String.self) else { return nil }
            return .stepCompleted(step: step, answers: (try? reader.next([String: DBusValue].self)) ?? [:])
        case (BusFlowService.sessionInterface.rawValue, "Submitted"):
            return .submitted(receipt: (try? reader.next([String: DBusValue].self)) ?? [:])
        case (BusFlowService.sessionInterface.rawValue, "SubmitFailed"):
            return .submitFailed(message: (try? reader.next(String.self)) ?? "")
        case (BusFlowService.sessionInterface.rawValue, "Announcement"):
            return .announcement((try? reader.next(String.self)) ?? "")
        case (BusFlowService.managerInterface.rawValue, "SessionRemoved"):
            guard let id = try? reader.next(String.self), id == sessionID else { return nil }
            return .removed
        default:
            return nil
        }
    }
}
