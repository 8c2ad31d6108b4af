import DBus
import FlowEngine

/// The properties of the Session interface, in the order the interface
/// declares them. The daemon builds its member table from this list and
/// compares snapshots along it, so a property cannot be declared without a
/// value, or change without a `PropertiesChanged`.
package enum SessionProperty: String, Sendable, Hashable, CaseIterable {
    case id = "Id"
    case flowID = "FlowId"
    case owner = "Owner"
    case locale = "Locale"
    case state = "State"
    case currentStep = "CurrentStep"
    case stepIndex = "StepIndex"
    case stepCount = "StepCount"
    case canGoBack = "CanGoBack"
    case canContinue = "CanContinue"
    case continueLabel = "ContinueLabel"
    case returningToReview = "ReturningToReview"
    case lastError = "LastError"
    case createdAt = "CreatedAt"
    case updatedAt = "UpdatedAt"
    case path = "Path"
    case announcement = "Announcement"
    case receipt = "Receipt"
    /// Since 1.1: the ids of the current step's fields that are shown, in
    /// order. It changes when an answer shows or hides a field (`visibleIf`),
    /// so a window can read the step again at once.
    case visibleFields = "VisibleFields"
    /// Since 1.1: the locale the session asked for, normalized (`de-DE`);
    /// `Locale` under a name that says so. `SetLocale` changes both.
    case requestedLocale = "RequestedLocale"
    /// Since 1.1: the one of the flow's locales its texts resolve to (`ar`
    /// on a flow written in `en` and `de`: `en`).
    case effectiveLocale = "EffectiveLocale"
    /// Since 1.1: the flow's title in the session's locale.
    case flowTitle = "FlowTitle"
    /// Since 1.1: the flow's description in the session's locale, or empty.
    case flowDescription = "FlowDescription"
    /// Since 1.1: how many times the answers have changed (the number in the
    /// submit's idempotency key). It moves with every stored change of an
    /// answer and with nothing else, so a second window that watches the
    /// session knows to read the step again, where `UpdatedAt` alone is not
    /// signalled.
    case revision = "Revision"

    /// Properties a flowd 1.0 does not have: a client tolerates their absence.
    package static let since1_1: Set<SessionProperty> = [
        .visibleFields, .requestedLocale, .effectiveLocale, .flowTitle, .flowDescription, .revision,
    ]

    /// The property's name on the bus.
    package var name: MemberName { MemberName(trusted: rawValue) }

    /// Its place in ``allCases`` (the declaration order), and so its bit in
    /// a ``SessionPropertySet``.
    package var ordinal: Int {
        switch self {
        case .id: 0
        case .flowID: 1
        case .owner: 2
        case .locale: 3
        case .state: 4
        case .currentStep: 5
        case .stepIndex: 6
        case .stepCount: 7
        case .canGoBack: 8
        case .canContinue: 9
        case .continueLabel: 10
        case .returningToReview: 11
        case .lastError: 12
        case .createdAt: 13
        case .updatedAt: 14
        case .path: 15
        case .announcement: 16
        case .receipt: 17
        case .visibleFields: 18
        case .requestedLocale: 19
        case .effectiveLocale: 20
        case .flowTitle: 21
        case .flowDescription: 22
        case .revision: 23
        }
    }

    /// Says what the session is and where it stands, never what was
    /// answered: what `GetManagedObjects` and `InterfacesAdded` carry.
    /// Left out are the texts answers may be piped into (`Path`'s step
    /// titles, `Announcement`), the plugins' texts (`LastError`, `Receipt`,
    /// which may quote answers) and `VisibleFields` (which follows answers
    /// through `visibleIf`) and `Revision` (which moves as they are
    /// typed); an owner reads them on the session object.
    package var isMetadata: Bool {
        switch self {
        case .id, .flowID, .owner, .locale, .state, .currentStep, .stepIndex, .stepCount, .canGoBack, .canContinue,
             .continueLabel, .returningToReview, .createdAt, .updatedAt, .requestedLocale, .effectiveLocale, .flowTitle,
             .flowDescription:
            return true
        case .lastError, .path, .announcement, .receipt, .visibleFields, .revision:
            return false
        }
    }

    /// The ``isMetadata`` properties, in declaration order, made once.
    package static let metadataCases = allCases.filter(\.isMetadata)

    /// The property's D-Bus type.
    package var signature: Signature {
        switch self {
        case .id, .flowID, .locale, .state, .currentStep, .continueLabel, .lastError, .announcement, .requestedLocale,
             .effectiveLocale, .flowTitle, .flowDescription:
            return .string
        case .owner, .stepIndex, .stepCount: return .uint32
        case .canGoBack, .canContinue, .returningToReview: return .bool
        case .createdAt, .updatedAt, .revision: return .uint64
        case .path: return "a(sss)"
        case .receipt: return "a{sv}"
        case .visibleFields: return "as"
        }
    }

    /// Fixed for the session's lifetime (`EmitsChangedSignal` `const`).
    /// `Locale` was until 1.1, when `SetLocale` came.
    package var isConstant: Bool {
        switch self {
        case .id, .flowID, .owner, .createdAt: return true
        default: return false
        }
    }

    /// Its `org.freedesktop.DBus.Property.EmitsChangedSignal`: `const` for
    /// the constant ones; `false` for `UpdatedAt`, which goes out with other
    /// changes but never alone (a keystroke-driven `SetAnswers` changes only
    /// the time, and a signal per keystroke tells a client nothing);
    /// `true` for the rest.
    package var emitsChangedSignal: EmitsChangedSignal {
        if isConstant { return .const }
        return self == .updatedAt ? .no : .yes
    }

    /// The entries of a `PropertiesChanged` (or `GetAll`) dictionary that name
    /// a property of this interface with its type; others are left out.
    package static func values(in dictionary: [String: DBusValue]) -> [SessionProperty: DBusValue] {
        var values: [SessionProperty: DBusValue] = [:]
        for (name, value) in dictionary {
            if let property = SessionProperty(rawValue: name), value.hasType(property.signature) { values[property] = value }
        }
        return values
    }
}

/// Some of the Session interface's properties, kept as bits and listed in
/// declaration order: what a call can change (the daemon works out and
/// compares only those after it), and what a `PropertiesChanged` names.
package struct SessionPropertySet: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral {
    private var bits: UInt32

    package init(arrayLiteral properties: SessionProperty...) {
        bits = 0
        for property in properties { bits |= 1 << property.ordinal }
    }

    private init(bits: UInt32) { self.bits = bits }

    /// Every property.
    package static let all = SessionPropertySet(bits: (1 << SessionProperty.allCases.count) - 1)

    /// What a change of answers can move (`SetAnswers`, a validator's
    /// verdict or normalized value): the revision and the time, what
    /// follows the predicted path and the current step's checks, the state
    /// and its error (editing leaves `failed`) and the announcement (a new
    /// warning). Never the position, the locale, the flow's texts, the
    /// receipt, or what is fixed.
    package static let changedByAnswers: SessionPropertySet = [
        .state, .stepIndex, .stepCount, .canGoBack, .canContinue, .continueLabel, .lastError, .updatedAt, .path,
        .announcement, .visibleFields, .revision,
    ]

    /// What a change of answers on the current step can move when the
    /// flow keeps each answer's effects on its step
    /// (``FlowDefinition/answersStayOnTheirStep``): ``changedByAnswers``
    /// without what follows the path, but `CanContinue` (the step's own
    /// checks). No path is walked for these when `CanContinue` is known.
    package static let changedByAnswersOnTheirStep: SessionPropertySet = [
        .state, .canContinue, .lastError, .updatedAt, .announcement, .revision,
    ]

    /// What a move can change (`Continue`, `Back`, `GoTo`, a submit begun,
    /// ended or cancelled): all but the locale, the flow's texts in it, and
    /// what is fixed for the session's lifetime.
    package static let changedByMoves = all.subtracting([
        .id, .flowID, .owner, .createdAt, .locale, .requestedLocale, .effectiveLocale, .flowTitle, .flowDescription,
    ])

    /// What follows the predicted path and the current step's checks:
    /// worked out together by one walk (``FlowSession/progressSnapshot(canContinue:)``).
    package static let followingPath: SessionPropertySet = [
        .stepIndex, .stepCount, .canGoBack, .canContinue, .continueLabel, .path, .visibleFields,
    ]

    package var isEmpty: Bool { bits == 0 }

    package func intersection(_ other: SessionPropertySet) -> SessionPropertySet { SessionPropertySet(bits: bits & other.bits) }

    package func contains(_ property: SessionProperty) -> Bool { bits & (1 << property.ordinal) != 0 }

    package func subtracting(_ other: SessionPropertySet) -> SessionPropertySet { SessionPropertySet(bits: bits & ~other.bits) }

    package mutating func insert(_ property: SessionProperty) { bits |= 1 << property.ordinal }

    /// The properties in declaration order.
    package func makeIterator() -> Iterator { Iterator(rest: bits) }

    package struct Iterator: IteratorProtocol {
        fileprivate var rest: UInt32

        package mutating func next() -> SessionProperty? {
            guard rest != 0 else { return nil }
            let ordinal = rest.trailingZeroBitCount
            rest &= rest - 1
            return SessionPropertySet.cases[ordinal]
        }
    }

    /// ``SessionProperty/allCases``, made once (the synthesized getter
    /// builds the array on every call).
    private static let cases = SessionProperty.allCases
}

/// The properties of the Manager interface.
package enum ManagerProperty: String, Sendable, Hashable, CaseIterable {
    /// `s`: the daemon's version.
    case version = "Version"
    /// `u`: live sessions of every uid; emits `PropertiesChanged`.
    case sessionCount = "SessionCount"

    /// The property's name on the bus.
    package var name: MemberName { MemberName(trusted: rawValue) }
}

/// One entry of a session's predicted path (the `Path` property).
package struct PathStep: Sendable, Hashable {
    /// A step id, or `review`.
    package var step: String
    /// The step's title in the session's locale.
    package var title: String
    /// Where the person is relative to this step.
    package var status: PathEntry.Status

    /// A path entry.
    package init(step: String, title: String, status: PathEntry.Status) {
        self.step = step
        self.title = title
        self.status = status
    }
}

/// The values of every property of one session at one moment: built by the
/// daemon from the engine's session, sent by ``value(of:)``, decoded by a
/// client with ``init(dbus:)`` (`GetAll`) and ``set(_:from:)`` (`Get`,
/// `PropertiesChanged`).
package struct SessionProperties: Sendable, Hashable {
    package var id: String
    package var flowID: String
    package var owner: UInt32 = 0
    package var locale = "en"
    package var state = SessionState.editing
    package var currentStep = ""
    package var stepIndex = 0
    package var stepCount = 0
    package var canGoBack = false
    package var canContinue = false
    package var continueLabel = ""
    package var returningToReview = false
    /// The last submit's localized error, or empty.
    package var lastError = ""
    /// Microseconds since the epoch.
    package var createdAt: UInt64 = 0
    /// Microseconds since the epoch.
    package var updatedAt: UInt64 = 0
    package var path: [PathStep] = []
    package var announcement = ""
    /// The last successful submit's receipt; empty before.
    package var receipt: [String: DBusValue] = [:]
    /// The ids of the current step's shown fields, in order.
    package var visibleFields: [String] = []
    /// The requested locale, normalized (the same as ``locale``).
    package var requestedLocale = "en"
    /// The flow locale the session's texts resolve to.
    package var effectiveLocale = "en"
    /// The flow's title in the session's locale.
    package var flowTitle = ""
    /// The flow's description in the session's locale, or empty.
    package var flowDescription = ""
    /// How many times the answers have changed.
    package var revision: UInt64 = 0

    /// Session `id` of `flowID`; the rest is set afterwards.
    package init(id: String, flowID: String) {
        self.id = id
        self.flowID = flowID
    }

    /// The daemon's side: the values of `session` now (one walk of its path).
    /// `only`: the properties to work out (the rest keep their defaults,
    /// for a `Get` of one); `canContinue`, `finishedStep`: as in
    /// ``update(_:from:canContinue:finishedStep:)``.
    /// `session` is borrowed: an initializer would otherwise take its own
    /// copy (some twenty references) of a session it only reads.
    package init(
        _ session: borrowing FlowSession, only properties: SessionPropertySet = .all, canContinue known: Bool? = nil,
        finishedStep: String? = nil
    ) {
        self.init(id: session.record.id, flowID: session.flow.id)
        update(properties, from: session, canContinue: known, finishedStep: finishedStep)
    }

    /// Sets the values of `properties` from `session` and leaves the rest:
    /// what the daemon works out after a call that can change only those.
    /// The path is walked once, and only when a property that follows it is
    /// asked for; `canContinue`, when given, is the session's
    /// ``FlowSession/canContinue`` as the call that made it worked it out,
    /// and `finishedStep` a step it knows to be finished (Continue's).
    package mutating func update(
        _ properties: SessionPropertySet, from session: borrowing FlowSession, canContinue known: Bool? = nil,
        finishedStep: String? = nil
    ) {
        // What follows the path comes from one walk of it, taken apart here
        // (reading it through an optional copied the whole walk per property).
        let onPath = properties.intersection(.followingPath)
        if onPath == [.canContinue], let known {
            // The call worked out the step's checks: no walk for them.
            canContinue = known
        } else if !onPath.isEmpty {
            let walked = session.progressSnapshot(canContinue: known, finishedStep: finishedStep)
            for property in onPath {
                switch property {
                case .stepIndex: stepIndex = walked.stepIndex
                case .stepCount: stepCount = walked.stepCount
                case .canGoBack: canGoBack = walked.canGoBack
                case .canContinue: canContinue = walked.canContinue
                case .continueLabel: continueLabel = walked.continueLabel
                case .path: path = walked.path.map { PathStep(step: $0.id, title: $0.title, status: $0.status) }
                case .visibleFields: visibleFields = walked.visibleFields
                default: break
                }
            }
        }
        let summary = properties.contains(.flowTitle) || properties.contains(.flowDescription)
            ? session.flow.summary(locale: session.record.locale) : nil
        for property in properties {
            switch property {
            case .id: id = session.record.id
            case .flowID: flowID = session.flow.id
            case .owner: owner = session.record.owner
            case .locale: locale = session.record.locale
            case .state: state = session.state
            case .currentStep: currentStep = session.currentStepID
            case .stepIndex, .stepCount, .canGoBack, .canContinue, .continueLabel, .path, .visibleFields:
                continue  // from the walk, above
            case .returningToReview: returningToReview = session.returningToReview
            case .lastError: lastError = session.lastError ?? ""
            case .createdAt: createdAt = UInt64(clamping: session.record.createdAt)
            case .updatedAt: updatedAt = UInt64(clamping: session.record.updatedAt)
            case .announcement: announcement = session.announcement
            case .receipt: receipt = session.record.receipt.map(WireValue.json) ?? [:]
            case .requestedLocale: requestedLocale = session.requestedLocale
            case .effectiveLocale: effectiveLocale = session.effectiveLocale
            case .flowTitle: flowTitle = summary?.title ?? flowTitle
            case .flowDescription: flowDescription = summary?.description ?? flowDescription
            case .revision: revision = session.record.revision
            }
        }
    }

    /// The encoder: the D-Bus value of `property`.
    package func value(of property: SessionProperty) -> DBusValue {
        switch property {
        case .id: return .string(id)
        case .flowID: return .string(flowID)
        case .owner: return .uint32(owner)
        case .locale: return .string(locale)
        case .state: return .string(state.rawValue)
        case .currentStep: return .string(currentStep)
        case .stepIndex: return .uint32(UInt32(clamping: stepIndex))
        case .stepCount: return .uint32(UInt32(clamping: stepCount))
        case .canGoBack: return .bool(canGoBack)
        case .canContinue: return .bool(canContinue)
        case .continueLabel: return .string(continueLabel)
        case .returningToReview: return .bool(returningToReview)
        case .lastError: return .string(lastError)
        case .createdAt: return .uint64(createdAt)
        case .updatedAt: return .uint64(updatedAt)
        case .path:
            return .array(
                elementType: "(sss)",
                path.map { .structure([.string($0.step), .string($0.title), .string($0.status.rawValue)]) })
        case .announcement: return .string(announcement)
        case .receipt: return .vardict(receipt)
        case .visibleFields: return .strings(visibleFields)
        case .requestedLocale: return .string(requestedLocale)
        case .effectiveLocale: return .string(effectiveLocale)
        case .flowTitle: return .string(flowTitle)
        case .flowDescription: return .string(flowDescription)
        case .revision: return .uint64(revision)
        }
    }

    /// Writes `property`'s entry of a `PropertiesChanged` or `GetAll`
    /// dictionary: the name and the value in a variant, as
    /// ``value(of:)`` would be written, with no ``DBusValue`` in between;
    /// the name and the variant's signature as one head made once
    /// (``entryHeads``).
    package func writeEntry(_ property: SessionProperty, into writer: inout WireWriter) throws(DBusError) {
        writer.entry(Self.entryHeads[property.ordinal])
        switch property {
        case .id: writer.string(id)
        case .flowID: writer.string(flowID)
        case .owner: writer.uint32(owner)
        case .locale: writer.string(locale)
        case .state: writer.string(state.rawValue)
        case .currentStep: writer.string(currentStep)
        case .stepIndex: writer.uint32(UInt32(clamping: stepIndex))
        case .stepCount: writer.uint32(UInt32(clamping: stepCount))
        case .canGoBack: writer.bool(canGoBack)
        case .canContinue: writer.bool(canContinue)
        case .continueLabel: writer.string(continueLabel)
        case .returningToReview: writer.bool(returningToReview)
        case .lastError: writer.string(lastError)
        case .createdAt: writer.int64(Int64(bitPattern: createdAt))
        case .updatedAt: writer.int64(Int64(bitPattern: updatedAt))
        case .path:
            let entries = writer.arrayStart(elementAlignment: 8)
            for step in path {
                writer.align(8)
                writer.string(step.step)
                writer.string(step.title)
                writer.string(step.status.rawValue)
            }
            writer.arrayEnd(entries)
        case .announcement: writer.string(announcement)
        case .receipt: try writer.value(.vardict(receipt))
        case .visibleFields: writer.strings(visibleFields)
        case .requestedLocale: writer.string(requestedLocale)
        case .effectiveLocale: writer.string(effectiveLocale)
        case .flowTitle: writer.string(flowTitle)
        case .flowDescription: writer.string(flowDescription)
        case .revision: writer.int64(Int64(bitPattern: revision))
        }
    }

    /// Each property's entry head, its name and its signature
    /// (``SessionProperty/signature``), by ordinal: a test checks them
    /// against the names and signatures.
    static let entryHeads: [VardictKey] = [
        VardictKey("Id", "s"), VardictKey("FlowId", "s"), VardictKey("Owner", "u"), VardictKey("Locale", "s"),
        VardictKey("State", "s"), VardictKey("CurrentStep", "s"), VardictKey("StepIndex", "u"),
        VardictKey("StepCount", "u"), VardictKey("CanGoBack", "b"), VardictKey("CanContinue", "b"),
        VardictKey("ContinueLabel", "s"), VardictKey("ReturningToReview", "b"), VardictKey("LastError", "s"),
        VardictKey("CreatedAt", "t"), VardictKey("UpdatedAt", "t"), VardictKey("Path", "a(sss)"),
        VardictKey("Announcement", "s"), VardictKey("Receipt", "a{sv}"), VardictKey("VisibleFields", "as"),
        VardictKey("RequestedLocale", "s"), VardictKey("EffectiveLocale", "s"), VardictKey("FlowTitle", "s"),
        VardictKey("FlowDescription", "s"), VardictKey("Revision", "t"),
    ]

    /// Writes the ``SessionProperty/isMetadata`` entries of an `a{sv}`, in
    /// declaration order (``metadata``'s values, through ``writeEntry(_:into:)``):
    /// a session's properties in `InterfacesAdded`, without a dictionary
    /// of ``DBusValue``s in between.
    package func writeMetadata(into writer: inout WireWriter) throws(DBusError) {
        for property in SessionProperty.metadataCases { try writeEntry(property, into: &writer) }
    }

    /// The ``SessionProperty/isMetadata`` properties and their values: a
    /// session's entry in `GetManagedObjects` and `InterfacesAdded`.
    package var metadata: [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        for property in SessionProperty.allCases where property.isMetadata { values[property.rawValue] = value(of: property) }
        return values
    }

    /// The properties whose values differ from `old`, in declaration order:
    /// what a `PropertiesChanged` announces.
    package func changed(since old: SessionProperties) -> [SessionProperty] {
        changed(since: old, among: .all)
    }

    /// The properties among `candidates` whose values differ from `old`, in
    /// declaration order: what a `PropertiesChanged` announces after a call
    /// that can change only those.
    package func changed(since old: SessionProperties, among candidates: SessionPropertySet) -> [SessionProperty] {
        candidates.filter { !hasSameValue(of: $0, as: old) }
    }

    private func hasSameValue(of property: SessionProperty, as other: SessionProperties) -> Bool {
        switch property {
        case .id: return id == other.id
        case .flowID: return flowID == other.flowID
        case .owner: return owner == other.owner
        case .locale: return locale == other.locale
        case .state: return state == other.state
        case .currentStep: return currentStep == other.currentStep
        case .stepIndex: return stepIndex == other.stepIndex
        case .stepCount: return stepCount == other.stepCount
        case .canGoBack: return canGoBack == other.canGoBack
        case .canContinue: return canContinue == other.canContinue
        case .continueLabel: return continueLabel == other.continueLabel
        case .returningToReview: return returningToReview == other.returningToReview
        case .lastError: return lastError == other.lastError
        case .createdAt: return createdAt == other.createdAt
        case .updatedAt: return updatedAt == other.updatedAt
        case .path: return path == other.path
        case .announcement: return announcement == other.announcement
        case .receipt: return receipt == other.receipt
        case .visibleFields: return visibleFields == other.visibleFields
        case .requestedLocale: return requestedLocale == other.requestedLocale
        case .effectiveLocale: return effectiveLocale == other.effectiveLocale
        case .flowTitle: return flowTitle == other.flowTitle
        case .flowDescription: return flowDescription == other.flowDescription
        case .revision: return revision == other.revision
        }
    }

    /// The decoder of a `GetAll` reply: every property must be there with
    /// its type, except those a flowd 1.0 does not have (``SessionProperty/since1_1``).
    package init(dbus dictionary: [String: DBusValue]) throws(WireError) {
        self.init(id: "", flowID: "")
        for property in SessionProperty.allCases {
            guard let value = dictionary[property.rawValue] else {
                if SessionProperty.since1_1.contains(property) { continue }
                throw WireError("the session's properties have no \(property.rawValue) (\(property.signature))")
            }
            try set(property, from: value)
        }
    }

    /// The decoder of one property's value (`Get`, `PropertiesChanged`).
    package mutating func set(_ property: SessionProperty, from value: DBusValue) throws(WireError) {
        let place = "the property \(property.rawValue)"
        func typed<T: DBusRepresentable>(_ type: T.Type) throws(WireError) -> T {
            try WireDictionary.typed(value, type, place)
        }
        switch property {
        case .id: id = try typed(String.self)
        case .flowID: flowID = try typed(String.self)
        case .owner: owner = try typed(UInt32.self)
        case .locale: locale = try typed(String.self)
        case .state:
            let text = try typed(String.self)
            guard let state = SessionState(rawValue: text) else {
                throw WireError("\(place) is \"\(text.prefix(64))\", which is not a session state")
            }
            self.state = state
        case .currentStep: currentStep = try typed(String.self)
        case .stepIndex: stepIndex = Int(try typed(UInt32.self))
        case .stepCount: stepCount = Int(try typed(UInt32.self))
        case .canGoBack: canGoBack = try typed(Bool.self)
        case .canContinue: canContinue = try typed(Bool.self)
        case .continueLabel: continueLabel = try typed(String.self)
        case .returningToReview: returningToReview = try typed(Bool.self)
        case .lastError: lastError = try typed(String.self)
        case .createdAt: createdAt = try typed(UInt64.self)
        case .updatedAt: updatedAt = try typed(UInt64.self)
        case .path:
            var steps: [PathStep] = []
            for entry in try typed([DBusStruct<String, String, String>].self) {
                let (step, title, status) = entry.fields
                guard let status = PathEntry.Status(rawValue: status) else {
                    throw WireError("\(place) has the status \"\(status.prefix(64))\" for \(step.prefix(64))")
                }
                steps.append(PathStep(step: step, title: title, status: status))
            }
            path = steps
        case .announcement: announcement = try typed(String.self)
        case .receipt: receipt = try typed([String: DBusValue].self)
        case .visibleFields: visibleFields = try typed([String].self)
        case .requestedLocale: requestedLocale = try typed(String.self)
        case .effectiveLocale: effectiveLocale = try typed(String.self)
        case .flowTitle: flowTitle = try typed(String.self)
        case .flowDescription: flowDescription = try typed(String.self)
        case .revision: revision = try typed(UInt64.self)
        }
    }
}

/// A session's property values in 192 bytes: one 64-bit digest per
/// property, so the daemon can keep what clients last heard of every session
/// it holds and compare a change's new values with it, without keeping the
/// values themselves (the path, the texts) or working out the old ones again.
///
/// A number, a flag or the state is its own digest (its value, exactly);
/// a text, the path, the visible fields and the receipt are hashed with
/// `Hasher` (SipHash, seeded at random per process), or 0 when empty. Equal values always
/// have equal digests; two different values of one property have the same
/// digest with a chance of about one in 2⁶⁴, and only then would a change go
/// unannounced.
package struct PropertyDigests: Sendable, Equatable {
    private var digests: InlineArray<24, UInt64>

    /// The digests of every property of `values`.
    package init(_ values: SessionProperties) {
        digests = InlineArray(repeating: 0)
        for property in SessionPropertySet.all { digests[property.ordinal] = values.digest(of: property) }
    }

    /// The digest of `property`'s value.
    package subscript(property: SessionProperty) -> UInt64 {
        get { digests[property.ordinal] }
        set { digests[property.ordinal] = newValue }
    }

    package static func == (a: PropertyDigests, b: PropertyDigests) -> Bool {
        SessionPropertySet.all.allSatisfy { a[$0] == b[$0] }
    }

    /// Takes the digests of `candidates` from `now` and returns those whose
    /// digest moved, in declaration order: what a `PropertiesChanged` names
    /// after a call that can change only `candidates`.
    package mutating func update(_ candidates: SessionPropertySet, to now: SessionProperties) -> [SessionProperty] {
        var changed: [SessionProperty] = []
        for property in candidates {
            let digest = now.digest(of: property)
            if digest != digests[property.ordinal] {
                digests[property.ordinal] = digest
                changed.append(property)
            }
        }
        return changed
    }
}

extension PathEntry.Status {
    /// A number per status, for ``SessionProperties/digest(of:)``.
    fileprivate var digit: UInt8 {
        switch self {
        case .done: return 0
        case .current: return 1
        case .upcoming: return 2
        }
    }
}

extension SessionProperties {
    /// The ``PropertyDigests`` digest of `property`'s value.
    /// An empty text, list or receipt is 0 without hashing (the error, the
    /// receipt and often the announcement are empty: some 300 instructions
    /// each); a value hashed to 0 by chance is as likely as any collision.
    package func digest(of property: SessionProperty) -> UInt64 {
        func hashed(_ body: (inout Hasher) -> Void) -> UInt64 {
            var hasher = Hasher()
            body(&hasher)
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }
        func hashed(_ text: String) -> UInt64 {
            text.isEmpty ? 0 : hashed { $0.combine(text) }
        }
        switch property {
        case .id: return hashed(id)
        case .flowID: return hashed(flowID)
        case .owner: return UInt64(owner)
        case .locale: return hashed(locale)
        case .state:
            switch state {
            case .editing: return 0
            case .review: return 1
            case .submitting: return 2
            case .submitted: return 3
            case .failed: return 4
            }
        case .currentStep: return hashed(currentStep)
        case .stepIndex: return UInt64(truncatingIfNeeded: stepIndex)
        case .stepCount: return UInt64(truncatingIfNeeded: stepCount)
        case .canGoBack: return canGoBack ? 1 : 0
        case .canContinue: return canContinue ? 1 : 0
        case .continueLabel: return hashed(continueLabel)
        case .returningToReview: return returningToReview ? 1 : 0
        case .lastError: return hashed(lastError)
        case .createdAt: return createdAt
        case .updatedAt: return updatedAt
        case .path:
            if path.isEmpty { return 0 }
            // Each entry's two texts and its status as a number (the
            // status's `Hashable` hashed its raw text).
            return hashed { hasher in
                hasher.combine(path.count)
                for step in path {
                    hasher.combine(step.step)
                    hasher.combine(step.title)
                    hasher.combine(step.status.digit)
                }
            }
        case .announcement: return hashed(announcement)
        case .receipt: return receipt.isEmpty ? 0 : hashed { $0.combine(receipt) }
        case .visibleFields: return visibleFields.isEmpty ? 0 : hashed { $0.combine(visibleFields) }
        case .requestedLocale: return hashed(requestedLocale)
        case .effectiveLocale: return hashed(effectiveLocale)
        case .flowTitle: return hashed(flowTitle)
        case .flowDescription: return hashed(flowDescription)
        case .revision: return revision
        }
    }
}
