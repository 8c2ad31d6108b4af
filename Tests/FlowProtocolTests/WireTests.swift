import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import Testing

/// A flow with every field type and every constraint, a content step and Review.
let everyField = """
    {"format": 1, "id": "wire", "title": {"en": "Wire", "de": "Draht"}, "description": "Every field type",
     "steps": [
      {"id": "intro", "kind": "content", "title": "Welcome", "body": "Hello.", "icon": "dialog-information"},
      {"id": "all", "title": "All", "description": "Everything", "fields": [
        {"id": "name", "type": "text", "label": "Name", "required": true, "minLength": 2, "maxLength": 40,
         "placeholder": "Ada", "help": "Your name"},
        {"id": "pin", "type": "secure", "label": "PIN", "minLength": 4},
        {"id": "count", "type": "number", "label": "Count", "minimum": 1, "maximum": 9, "integer": true},
        {"id": "colour", "type": "choice", "label": "Colour", "other": true, "otherLabel": "Another",
         "options": [{"id": "red", "label": "Red", "icon": "emblem-important"}, {"id": "blue", "label": "Blue"}]},
        {"id": "days", "type": "multichoice", "label": "Days", "minSelected": 1, "maxSelected": 2,
         "options": [{"id": "mon", "label": "Monday"}, {"id": "tue", "label": "Tuesday"}]},
        {"id": "day", "type": "date", "label": "Day", "after": "2025-01-01", "before": "today"},
        {"id": "ok", "type": "toggle", "label": "OK", "mustBeOn": true},
        {"id": "note", "type": "multiline", "label": "Note"},
        {"id": "mail", "type": "email", "label": "Mail"},
        {"id": "at", "type": "time", "label": "At"}]}],
     "review": {"title": "Review", "note": "A note."}}
    """

/// A flow with every kind of 1.1 hint: a pattern with its hint, a toggle,
/// a `requiredIf` with a hint, an `equals` rule, a plugin step validator.
let hinted = """
    {"format": 1, "id": "loan", "title": {"en": "Loan", "de": "Darlehen"},
     "description": {"en": "An application", "de": "Ein Antrag"},
     "steps": [
      {"id": "about", "title": {"en": "About", "de": "Über"}, "fields": [
        {"id": "purpose", "type": "choice", "label": {"en": "Purpose", "de": "Zweck"}, "required": true,
         "options": [{"id": "loan", "label": {"en": "Loan", "de": "Darlehen"}}, {"id": "gift", "label": "Gift"}]},
        {"id": "phone", "type": "text", "label": "Phone", "pattern": "[0-9]+",
         "patternHint": {"en": "Digits only", "de": "Nur Ziffern"}},
        {"id": "income", "type": "number", "label": {"en": "Income", "de": "Einkommen"}},
        {"id": "ok", "type": "toggle", "label": "OK"},
        {"id": "password", "type": "secure", "label": {"en": "Password", "de": "Passwort"}},
        {"id": "confirm", "type": "secure", "label": "Confirm"}],
       "rules": [
        {"requiredIf": "income", "if": {"field": "purpose", "equals": "loan"},
         "hint": {"en": "Required for loans", "de": "Für Darlehen erforderlich"}},
        {"equals": ["password", "confirm"]},
        {"plugin": "test.step", "hint": {"en": "Checked with the registry", "de": "Vom Register geprüft"}}]}],
     "review": {}}
    """

/// A session of ``everyField`` on its form step, some answers given.
func answeredSession() throws -> FlowSession {
    let flow = try FlowLoader.load(everyField, fileName: "wire.json", capabilities: .any)
    let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
    var session = try FlowSession(flow: flow, id: String(repeating: "ab", count: 16), owner: 1000, locale: "en", clock: clock)
    _ = try session.continueStep(now: clock.now)
    _ = try session.setAnswers(
        ["name": .text("A"), "pin": .text("1234"), "count": .integer(3), "colour": .text("other"),
         "colour.other": .text("Teal"), "days": .list(["mon"]), "ok": .bool(false)],
        now: clock.now)
    return session
}

@Suite("Wire structs: one encoder, one decoder")
struct WireRoundTripTests {
    @Test("a step page from the engine's view comes back equal, with the contract's keys")
    func stepPage() throws {
        let session = try answeredSession()
        let page = StepPage(session.currentStep())
        #expect(page.kind == .form && page.fields.count == 10)
        let value = page.dbusValue
        #expect(value.signature == "a{sv}")
        #expect(try StepPage(dbusValue: value) == page)
        #expect(try StepPage(dbus: try #require(value.vardict)) == page)

        // The keys docs/dbus-api.md names, with their types.
        let fields = try #require(value.vardict?["fields"]?.vardicts)
        let colour = try #require(fields.first { $0["id"] == "colour" })
        #expect(colour["otherValue"] == "Teal", "Other's text has one key: otherValue")
        #expect(colour["otherText"] == nil)
        #expect(colour["optionIcons"]?.stringDictionary == ["red": "emblem-important"])
        #expect(colour["options"]?.signature == "a(ss)")
        let pin = try #require(fields.first { $0["id"] == "pin" })
        #expect(pin["value"] == nil, "a secure value is never sent")
        #expect(pin["isSet"] == true)
        let name = try #require(fields.first { $0["id"] == "name" })
        #expect(name["minLength"] == .uint32(2) && name["maxLength"] == .uint32(40))
        #expect(name["integer"] == false && name["mustBeOn"] == false, "integer and mustBeOn are always sent")
        #expect(name["optionIcons"] == nil, "optionIcons only when an option has an icon")
        let count = try #require(fields.first { $0["id"] == "count" })
        #expect(count["value"] == .int64(3) && count["minimum"] == .double(1) && count["integer"] == true)
        let day = try #require(fields.first { $0["id"] == "day" })
        #expect(day["before"] == "2025-06-16", "today is resolved")
        let decoded = try StepPage(dbusValue: value)
        #expect(decoded.field("colour")?.options.first?.icon == "emblem-important")
        #expect(decoded.field("days")?.value == .strings(["mon"]))
        #expect(decoded.field("ok")?.mustBeOn == true)
    }

    @Test("API 1.1: labels, the flow's texts, the locales and every rule hint go out and come back")
    func stepPageSinceOnePointOne() throws {
        let flow = try FlowLoader.load(hinted, fileName: "hinted.json", capabilities: .any)
        let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
        var session = try FlowSession(flow: flow, id: String(repeating: "12", count: 16), owner: 0, locale: "de_DE.UTF-8", clock: clock)
        _ = try session.setAnswers(["purpose": .text("loan")], now: clock.now)
        let page = StepPage(session.currentStep())
        let entries = try #require(page.dbusValue.vardict)
        #expect(entries["progressLabel"] == "Schritt 1 von 2")
        #expect(entries["optionalLabel"] == "(optional)" && entries["retryLabel"] == "Erneut versuchen")
        for key in ["cancelLabel", "submittingLabel", "notSentLabel"] {
            #expect(entries[key]?.string?.isEmpty == false, "\(key)")
        }
        #expect(entries["flowTitle"] == "Darlehen" && entries["flowDescription"] == "Ein Antrag")
        #expect(entries["locale"] == "de-DE" && entries["effectiveLocale"] == "de")
        #expect(entries["ruleHints"] == .array(
            elementType: "(sss)", [.structure([.string("plugin"), .string("test.step"), .string("Vom Register geprüft")])]))

        let fields = try #require(entries["fields"]?.vardicts)
        let byID = Dictionary(uniqueKeysWithValues: fields.map { ($0["id"]?.string ?? "", $0) })
        let ok = try #require(byID["ok"])
        #expect(ok["yesLabel"] == "Ja" && ok["noLabel"] == "Nein")
        let phone = try #require(byID["phone"])
        #expect(phone["patternHint"] == "Nur Ziffern")
        #expect(phone["yesLabel"] == nil && phone["noLabel"] == nil, "yes and no for toggles only")
        #expect(byID["income"]?["patternHint"] == nil, "a pattern's hint only when the field has a pattern")
        let income = try #require(byID["income"])
        #expect(income["conditionallyRequired"] == true && income["required"] == true, "required as it is now")
        #expect(income["ruleHints"] == .array(
            elementType: "(sss)", [.structure([.string("requiredIf"), .string("purpose"), .string("Für Darlehen erforderlich")])]))
        #expect(byID["confirm"]?["ruleHints"]?.signature == "a(sss)")
        #expect(phone["conditionallyRequired"] == false && phone["ruleHints"] == .array(elementType: "(sss)", []))

        let decoded = try StepPage(dbusValue: page.dbusValue)
        #expect(decoded == page)
        #expect(decoded.progressLabel == "Schritt 1 von 2" && decoded.effectiveLocale == "de")
        #expect(decoded.ruleHints == [RuleHint(kind: .plugin, subject: "test.step", text: "Vom Register geprüft")])
        #expect(decoded.field("confirm")?.ruleHints.first?.kind == .equals)
        #expect(decoded.field("confirm")?.hintTexts == ["Muss mit „Passwort“ übereinstimmen"])
        #expect(decoded.field("phone")?.hintTexts == ["Nur Ziffern"])
        #expect(decoded.field("ok")?.yesLabel == "Ja")
    }

    @Test("a 1.0 reply, without the 1.1 keys, still decodes: the new values are empty")
    func stepPageFromOnePointZero() throws {
        let page = StepPage(try answeredSession().currentStep())
        var entries = try #require(page.dbusValue.vardict)
        let added = ["progressLabel", "retryLabel", "cancelLabel", "submittingLabel", "notSentLabel", "optionalLabel",
                     "flowTitle", "flowDescription", "locale", "effectiveLocale", "ruleHints"]
        for key in added { #expect(entries.removeValue(forKey: key) != nil, "\(key) is sent") }
        var fields = try #require(entries["fields"]?.vardicts)
        for i in fields.indices {
            for key in ["yesLabel", "noLabel", "patternHint", "conditionallyRequired", "ruleHints"] { fields[i][key] = nil }
        }
        entries["fields"] = .vardicts(fields)
        let old = try StepPage(dbus: entries)
        #expect(old.progressLabel == "" && old.ruleHints.isEmpty && old.optionalLabel == "")
        #expect(old.field("ok")?.yesLabel == "" && old.field("ok")?.conditionallyRequired == false)
        #expect(old.fields.map(\.id) == page.fields.map(\.id) && old.title == page.title)
    }

    @Test("format 2: only shown fields, a computed value in words, warnings apart from errors, VisibleFields")
    func format2Page() throws {
        let flow = try FlowLoader.load("""
            {"format": 2, "id": "f2", "title": "F2", "steps": [{"id": "s", "title": "S", "fields": [
              {"id": "planned", "type": "number", "label": "Planned"},
              {"id": "pages", "type": "number", "label": "Pages"},
              {"id": "loan", "type": "toggle", "label": "Loan"},
              {"id": "back", "type": "date", "label": "Return", "visibleIf": {"field": "loan", "equals": true}},
              {"id": "price", "type": "computed", "label": "Price", "expr": "pages * 120", "display": "{value} €"}],
             "rules": [{"before": ["planned", "pages"], "level": "warning", "message": "Fewer pages than planned?"}]}]}
            """, fileName: "f2.json", capabilities: .any)
        let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
        var session = try FlowSession(flow: flow, id: String(repeating: "ef", count: 16), owner: 0, locale: "en", clock: clock)
        _ = try session.setAnswers(["pages": .integer(12), "planned": .integer(20)], now: clock.now)
        var page = StepPage(session.currentStep())
        #expect(page.fields.map(\.id) == ["planned", "pages", "loan", "price"], "the hidden return date is not listed")
        #expect(SessionProperties(session).visibleFields == ["planned", "pages", "loan", "price"])
        let value = page.dbusValue
        let fields = try #require(value.vardict?["fields"]?.vardicts)
        let price = try #require(fields.first { $0["id"] == "price" })
        #expect(price["type"] == "computed" && price["value"] == .int64(1440) && price["display"] == "1,440 €")
        let planned = try #require(fields.first { $0["id"] == "planned" })
        #expect(planned["warning"] == "Fewer pages than planned?" && planned["error"] == "", "a warning is not an error")
        #expect(value.vardict?["warning"] == "")
        #expect(try StepPage(dbusValue: value) == page)
        _ = try session.setAnswers(["loan": .bool(true)], now: clock.now)
        page = StepPage(session.currentStep())
        #expect(page.fields.map(\.id) == ["planned", "pages", "loan", "back", "price"])
        #expect(SessionProperties(session).visibleFields == ["planned", "pages", "loan", "back", "price"])
        #expect(SessionProperties(session).changed(since: SessionProperties(session)).isEmpty)
        // A page from a flowd 1.0 has no warning or display: it still decodes.
        var old = try #require(page.dbusValue.vardict)
        old["warning"] = nil
        old["fields"] = .array(elementType: "a{sv}", page.fields.map { field in
            var d = field.dbusValue.vardict ?? [:]
            d["warning"] = nil
            d["display"] = nil
            return .vardict(d)
        })
        let decoded = try StepPage(dbus: old)
        #expect(decoded.warning == "" && decoded.field("price")?.display == "")
    }

    @Test("a content step and the complete step round-trip too")
    func otherKinds() throws {
        let flow = try FlowLoader.load(everyField, fileName: "wire.json", capabilities: .any)
        let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
        let session = try FlowSession(flow: flow, id: String(repeating: "cd", count: 16), owner: 0, locale: "de", clock: clock)
        let page = StepPage(session.currentStep())
        #expect(page.kind == .content && page.icon == "dialog-information" && page.body == "Hello.")
        #expect(try StepPage(dbusValue: page.dbusValue) == page)
    }

    @Test("a review page from the engine's view comes back equal")
    func reviewPage() throws {
        let session = try answeredSession()
        let page = ReviewPage(session.review())
        #expect(page.note == "A note.")
        let arguments = page.dbusArguments
        #expect(arguments.map(\.signature.rawValue) == ["aa{sv}", "s"])
        let decoded = try ReviewPage(dbusArguments: arguments)
        #expect(decoded == page)
        #expect(decoded.group("all")?.display("name") == "A")
        #expect(decoded.group("all")?.display("pin")?.contains("1234") == false, "the secure value is masked")
    }

    @Test("flow, plugin and session listings come back equal")
    func listings() throws {
        let flow = try FlowLoader.load(everyField, fileName: "wire.json", capabilities: .any)
        let summary = FlowSummary(flow)
        #expect(summary.titles == ["en": "Wire", "de": "Draht"] && summary.steps == 2 && summary.review)
        #expect(try FlowSummary(dbusValue: summary.dbusValue) == summary)
        #expect(summary.title(in: "de-AT") == "Draht")
        #expect(summary.descriptions == ["en": "Every field type"], "a plain description is the English one")
        let loan = FlowSummary(try FlowLoader.load(hinted, fileName: "hinted.json", capabilities: .any))
        #expect(loan.descriptions == ["en": "An application", "de": "Ein Antrag"])
        #expect(loan.description(in: "de-CH") == "Ein Antrag" && loan.description(in: "ja") == "An application")
        #expect(try FlowSummary(dbusValue: loan.dbusValue) == loan)
        var fromOnePointZero = try #require(loan.dbusValue.vardict)
        fromOnePointZero["descriptions"] = nil
        let old = try FlowSummary(dbusValue: .vardict(fromOnePointZero))
        #expect(old.descriptions.isEmpty && old.description(in: "de") == "An application", "a 1.0 entry: the one description")

        for status in PluginSummary.Status.allCases {
            let plugin = PluginSummary(
                name: "p", version: "1", kinds: ["submit", "validator"], capabilities: ["p.x"], path: "/p.so",
                status: status, error: status == .loaded ? "" : "why")
            #expect(try PluginSummary(dbusValue: plugin.dbusValue) == plugin)
        }

        for state in SessionState.allCases {
            let listing = try #require(SessionListing(id: String(repeating: "0", count: 32), flowID: "wire", state: state))
            #expect(listing.dbusValue.signature == SessionListing.signature)
            #expect(try SessionListing(dbusValue: listing.dbusValue) == listing)
        }
        #expect(SessionListing(id: "not an id", flowID: "wire", state: .editing) == nil)
    }

    @Test("every session property has a value of its declared type, and GetAll decodes to the same values")
    func sessionProperties() throws {
        let session = try answeredSession()
        let properties = SessionProperties(session)
        var all: [String: DBusValue] = [:]
        for property in SessionProperty.allCases {
            let value = properties.value(of: property)
            #expect(value.hasType(property.signature), "\(property) is '\(value.signature)'")
            all[property.rawValue] = value
        }
        #expect(all.count == 24, "18, and since 1.1 VisibleFields, RequestedLocale, EffectiveLocale, FlowTitle, FlowDescription, Revision")
        #expect(properties.revision == session.record.revision && properties.revision > 0, "the session was answered")
        #expect(try SessionProperties(dbus: all) == properties)
        #expect(properties.requestedLocale == properties.locale && !properties.flowTitle.isEmpty)
        // A flowd 1.0 has none of 1.1's properties: its GetAll still decodes.
        var old = all
        for property in SessionProperty.since1_1 { old[property.rawValue] = nil }
        #expect(old.count == 18)
        #expect(try SessionProperties(dbus: old).visibleFields.isEmpty)
        #expect(properties.state == .editing && properties.currentStep == "all" && properties.owner == 1000)
        #expect(properties.path.map(\.status) == [.done, .current, .upcoming])

        // One property at a time, as PropertiesChanged carries them.
        var mirror = SessionProperties(id: "", flowID: "")
        for property in SessionProperty.allCases { try mirror.set(property, from: properties.value(of: property)) }
        #expect(mirror == properties)
        #expect(SessionProperty.values(in: all).count == 24)
    }

    @Test("the diff names exactly the properties that changed, in declaration order; constants never change")
    func changedProperties() throws {
        let before = SessionProperties(try answeredSession())
        #expect(before.changed(since: before).isEmpty)
        var after = before
        after.state = .review
        after.stepIndex += 1
        after.receipt = ["reference": "R-1"]
        after.path = []
        #expect(after.changed(since: before) == [.state, .stepIndex, .path, .receipt])
        for property in SessionProperty.allCases where property.isConstant {
            #expect(![SessionProperty.state, .currentStep].contains(property))
        }
        #expect(SessionProperty.allCases.filter(\.isConstant) == [.id, .flowID, .owner, .createdAt])
    }

    @Test("signals: each encoder's arguments decode to the same signal")
    func signals() throws {
        let session: [SessionSignal] = [
            .stepCompleted(step: "all", answers: ["name": "Ada", "count": .int64(3)]),
            .submitted(receipt: ["reference": "R-1", "nested": .vardict(["a": .double(1)])]),
            .submitFailed(message: "The calendar is full."),
            .announcement(text: "Step 2 of 3, All"),
        ]
        for signal in session {
            #expect(try SessionSignal(member: signal.member, arguments: signal.arguments) == signal)
            // The daemon's typed writer gives the bytes and signature the
            // generic arguments would.
            var typed = WireEncoder()
            typed.byte(1)  // so that any padding is not empty
            try signal.writeArguments(into: &typed)
            var generic = WireEncoder()
            generic.byte(1)
            for argument in signal.arguments { try generic.value(argument) }
            #expect(typed.bytes == generic.bytes, "\(signal.member)")
            #expect(signal.signature.rawValue == signal.arguments.map(\.signature.rawValue).joined(), "\(signal.member)")
        }
        let id = String(repeating: "ef", count: 16)
        for signal in [ManagerSignal.sessionNew(id: id), .sessionRemoved(id: id)] {
            let arguments = try #require(signal.arguments)
            #expect(arguments[1] == .objectPath(try #require(FlowBus.sessionPath(of: id))))
            #expect(try ManagerSignal(member: signal.member, arguments: arguments) == signal)
        }
        #expect(ManagerSignal.sessionNew(id: "x").arguments == nil, "no path can be made for a bad id")
        #expect(try SessionSignal(member: "Unknown", arguments: []) == nil)
        #expect(try ManagerSignal(member: "Unknown", arguments: []) == nil)
    }

    @Test("answers and plugin JSON go out in the contract's types")
    func values() {
        #expect(WireValue.answer(.text("a")) == .string("a"))
        #expect(WireValue.answer(.list(["a"])) == .strings(["a"]))
        #expect(WireValue.answer(.bool(true)) == .bool(true))
        #expect(WireValue.answer(.integer(-2)) == .int64(-2))
        #expect(WireValue.answer(.number(1.5)) == .double(1.5))
        let receipt = WireValue.json(["a": .string("x"), "n": .null, "list": .array([.number(1), .null]), "o": .object(["b": .bool(true)])])
        #expect(receipt["n"] == nil, "null is left out")
        #expect(receipt["list"] == .array(elementType: .variant, [.variant(.double(1))]))
        #expect(receipt["o"] == .vardict(["b": true]))
        for answer: AnswerValue in [.text("a"), .list([]), .list(["x", "y"]), .bool(false), .integer(1), .number(2)] {
            #expect(WireValue.isAnswer(WireValue.answer(answer)))
            #expect(WireValue.answer(from: WireValue.answer(answer)) == answer, "\(answer) reads back")
        }
        #expect(WireValue.answer(from: .uint32(7)) == .integer(7) && WireValue.answer(from: .int32(-7)) == .integer(-7))
        #expect(WireValue.answer(from: .vardict([:])) == nil && WireValue.answer(from: .objectPath("/x")) == nil)
        #expect(!WireValue.isAnswer(.uint32(1)) && !WireValue.isAnswer(.array(elementType: .int32, [])))
    }
}

@Suite("Names of the contract")
struct NameTests {
    @Test("every name derives from the bus name")
    func names() {
        #expect(FlowBus.name == "org.flowd.Flow1")
        #expect(FlowBus.managerPath == "/org/flowd/Flow1")
        #expect(FlowBus.sessionPrefix == "/org/flowd/Flow1/session")
        #expect(FlowBus.managerInterface == "org.flowd.Flow1.Manager")
        #expect(FlowBus.sessionInterface == "org.flowd.Flow1.Session")
        #expect(FlowErrorName.failed.errorName == "org.flowd.Flow1.Error.Failed")
    }

    @Test("session paths are made only from session ids, and read back")
    func sessionPaths() throws {
        let id = "0123456789abcdef0123456789abcdef"
        let path = try #require(FlowBus.sessionPath(of: id))
        #expect(path == "/org/flowd/Flow1/session/0123456789abcdef0123456789abcdef")
        #expect(FlowBus.sessionID(of: path) == id)
        for bad in ["", "0123", id.uppercased(), id + "0", "../../etc/passwd", "0123456789abcdef0123456789abcdeg"] {
            #expect(FlowBus.sessionPath(of: bad) == nil, "\(bad)")
        }
        // Same lengths as a session's path, one byte off.
        let nearly = [
            "/org/flowd/Flow2/session/\(id)", "/org/flowd/Flow1/session_\(id)", "/org/flowd/Flow1/session/\(id.uppercased())",
            "/org/flowd/Flow1/session/0123456789abcdef0123456789abcdeg", "/org/flowd/Flow1/session/\(id.dropLast(2))/a",
        ]
        for other in ["/org/flowd/Flow1", "/org/flowd/Flow1/session", "/x/\(id)", "/org/flowd/Flow1/session/\(id)/x"] + nearly {
            #expect(FlowBus.sessionID(of: try ObjectPath(other)) == nil, "\(other)")
        }
    }

    @Test("one list of error names, each parsed back; the engine's kinds map onto it")
    func errorNames() {
        #expect(Set(FlowErrorName.allCases.map(\.rawValue)).count == FlowErrorName.allCases.count)
        #expect(FlowErrorName.allCases.contains(.failed))
        for name in FlowErrorName.allCases {
            #expect(FlowErrorName(name.errorName) == name)
        }
        #expect(FlowErrorName("org.freedesktop.DBus.Error.Failed") == nil)
        #expect(FlowErrorName("org.flowd.Flow1.Error.Nonsense") == nil)
        #expect(FlowErrorName(SessionError.Kind.validationFailed) == .validationFailed)
        #expect(FlowErrorName(SessionError.Kind.incompatibleRecord) == .failed)
    }
}

/// What a client makes of replies that are not what the contract says: a
/// clear error naming the place, never a crash or a silent default.
@Suite("Hostile and malformed values are refused by the decoders")
struct HostileWireTests {
    static func step(without key: String? = nil, replacing: (String, DBusValue)? = nil) throws -> DBusValue {
        var entries = try #require(StepPage(try answeredSession().currentStep()).dbusValue.vardict)
        if let key { entries[key] = nil }
        if let (key, value) = replacing { entries[key] = value }
        return .vardict(entries)
    }

    /// The WireError `body` throws, or nil (recorded as an issue) when it decodes.
    static func refusal<T>(_ body: () throws(WireError) -> T, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        do {
            _ = try body()
            Issue.record("decoded although malformed", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("a GetStep reply without a key the contract always sends, or with one of another type")
    func stepKeys() throws {
        for key in ["id", "kind", "title", "fields", "index", "canGoBack", "continueLabel"] {
            let message = Self.refusal { () throws(WireError) in try StepPage(dbusValue: try! Self.step(without: key)) }
            #expect(message?.contains("\"\(key)\"") == true, "\(key): \(String(describing: message))")
        }
        let cases: [(String, DBusValue, String)] = [
            ("index", .string("1"), "'s', expected 'u'"),
            ("kind", .string("wizard"), "\"wizard\""),
            ("fields", .strings(["x"]), "'as', expected 'aa{sv}'"),
            ("canContinue", .uint32(1), "expected 'b'"),
            ("progressLabel", .uint32(1), "expected 's'"),
            ("ruleHints", .strings([]), "expected 'a(sss)'"),
        ]
        for (key, value, fragment) in cases {
            let message = Self.refusal { () throws(WireError) in try StepPage(dbusValue: try! Self.step(replacing: (key, value))) }
            #expect(message?.contains(fragment) == true, "\(key): \(String(describing: message))")
        }
        #expect(Self.refusal { () throws(WireError) in try StepPage(dbusValue: .string("not a dict")) }?.contains("a{sv}") == true)
        #expect(Self.refusal { () throws(WireError) in try StepPage(dbusValue: .stringDictionary(["id": "x"])) } != nil)
    }

    @Test("a field that is not what the contract says: unknown type, bad options, a value of no answer type")
    func fieldKeys() throws {
        func withField(_ change: (inout [String: DBusValue]) -> Void) throws -> DBusValue {
            var entries = try #require(StepPage(try answeredSession().currentStep()).dbusValue.vardict)
            var fields = try #require(entries["fields"]?.vardicts)
            change(&fields[0])
            entries["fields"] = .vardicts(fields)
            return .vardict(entries)
        }
        let cases: [(String, (inout [String: DBusValue]) -> Void)] = [
            ("\"type\"", { $0["type"] = "slider" }),
            ("\"options\"", { $0["options"] = .strings(["a"]) }),
            ("\"value\"", { $0["value"] = .structure([.string("a")]) }),
            ("\"otherValue\"", { $0["otherValue"] = .bool(true) }),
            ("\"minLength\"", { $0["minLength"] = .string("2") }),
            ("\"optionIcons\"", { $0["optionIcons"] = .strings([]) }),
            ("\"isSet\"", { $0["isSet"] = nil }),
            ("\"ruleHints\"", { $0["ruleHints"] = .strings(["Must match"]) }),
            ("\"bogus\"", { $0["ruleHints"] = .array(elementType: "(sss)", [.structure([.string("bogus"), .string(""), .string("x")])]) }),
            ("\"conditionallyRequired\"", { $0["conditionallyRequired"] = .string("yes") }),
            ("\"patternHint\"", { $0["patternHint"] = .bool(true) }),
        ]
        for (fragment, change) in cases {
            let value = try withField(change)
            let message = Self.refusal { () throws(WireError) in try StepPage(dbusValue: value) }
            #expect(message?.contains(fragment) == true, "\(fragment): \(String(describing: message))")
            #expect(message?.contains("field 1") == true, "the place is named: \(String(describing: message))")
        }
    }

    @Test("keys the contract does not name are ignored (a later flowd may add some)")
    func extraKeys() throws {
        let page = try StepPage(dbusValue: try Self.step(replacing: ("somethingNew", .uint64(7))))
        #expect(page == StepPage(try answeredSession().currentStep()))
    }

    @Test("review, listings, properties and signals refuse what does not fit")
    func others() throws {
        #expect(Self.refusal { () throws(WireError) in try ReviewPage(dbusArguments: [.string("x")]) }?.contains("aa{sv}s") == true)
        #expect(Self.refusal { () throws(WireError) in
            try ReviewPage(dbusArguments: [.vardicts([["step": "a"]]), .string("")])
        }?.contains("group 1") == true)
        #expect(Self.refusal { () throws(WireError) in try FlowSummary(dbusValue: .vardict(["id": "x"])) }?.contains("title") == true)
        let plugin = PluginSummary(name: "p", version: "1", kinds: [], status: .loaded).dbusValue.vardict ?? [:]
        var badStatus = plugin
        badStatus["status"] = "maybe"
        #expect(Self.refusal { () throws(WireError) in try PluginSummary(dbusValue: .vardict(badStatus)) }?.contains("maybe") == true)
        #expect(Self.refusal { () throws(WireError) in
            try SessionListing(dbusValue: .structure([.string("a"), .string("b"), .string("/x"), .string("editing")]))
        } != nil)
        #expect(Self.refusal { () throws(WireError) in
            try SessionListing(dbusValue: .structure([.string("a"), .string("b"), .objectPath("/x"), .string("lost")]))
        }?.contains("lost") == true)

        var all: [String: DBusValue] = [:]
        let properties = SessionProperties(try answeredSession())
        for property in SessionProperty.allCases { all[property.rawValue] = properties.value(of: property) }
        var missing = all
        missing["Receipt"] = nil
        #expect(Self.refusal { () throws(WireError) in try SessionProperties(dbus: missing) }?.contains("Receipt") == true)
        var wrong = all
        wrong["StepIndex"] = .int32(1)
        #expect(Self.refusal { () throws(WireError) in try SessionProperties(dbus: wrong) }?.contains("StepIndex") == true)
        var state = all
        state["State"] = "sleeping"
        #expect(Self.refusal { () throws(WireError) in try SessionProperties(dbus: state) }?.contains("sleeping") == true)
        var path = all
        path["Path"] = .array(elementType: "(sss)", [.structure([.string("a"), .string("A"), .string("later")])])
        #expect(Self.refusal { () throws(WireError) in try SessionProperties(dbus: path) }?.contains("later") == true)
        // PropertiesChanged: names of other interfaces and values of the wrong type are left out.
        #expect(SessionProperty.values(in: ["State": .uint32(1), "Nope": "x", "StepIndex": .uint32(2)]) == [.stepIndex: .uint32(2)])

        #expect(Self.refusal { () throws(WireError) in
            try SessionSignal(member: SessionSignal.stepCompletedMember, arguments: [.string("a")])
        }?.contains("sa{sv}") == true)
        #expect(Self.refusal { () throws(WireError) in
            try SessionSignal(member: SessionSignal.submittedMember, arguments: [.string("a")])
        } != nil)
        #expect(Self.refusal { () throws(WireError) in
            try ManagerSignal(member: ManagerSignal.sessionNewMember, arguments: [.string("a"), .string("b")])
        }?.contains("so") == true)
    }
}
