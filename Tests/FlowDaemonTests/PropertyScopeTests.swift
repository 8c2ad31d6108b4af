import DBus
@testable import FlowDaemon
import FlowEngine
import FlowKit
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// After a call, flowd works out again only the properties the call declares
/// it can change (``ChangeScope``) and compares those. These walks check the
/// declarations against the whole truth: after every call, the
/// `PropertiesChanged` queued must name exactly what a diff of two full
/// snapshots names, in the same order, with the values of a full snapshot.
@Suite("the properties a call declares it changes are all that change")
struct PropertyScopeTests {
    /// The example flows that start without a provider, and the test flows
    /// (with Review, branches, secure fields, no submit action).
    static func flows() throws -> [String: String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var flows = TestFlows.standard
        for name in ["onboarding", "survey", "registration", "device-enrolment"] {
            flows[name + ".json"] = try String(contentsOf: root.appendingPathComponent("flows/\(name).json"), encoding: .utf8)
        }
        return flows
    }

    /// A value for `field`, picked by `pick`: valid, empty or wrong, so that
    /// steps become finished and unfinished along the walk.
    static func value(for field: FieldDefinition, pick: UInt64) -> AnswerValue {
        let options = field.options.map(\.id) + (field.other ? ["other"] : [])
        switch field.type {
        case .choice: return pick % 4 == 0 || options.isEmpty ? .text("") : .text(options[Int(pick) % options.count])
        case .multichoice: return pick % 4 == 0 || options.isEmpty ? .list([]) : .list([options[Int(pick) % options.count]])
        case .toggle: return .bool(pick % 2 == 0)
        case .number: return pick % 3 == 0 ? .text("") : .integer(Int64(pick % 20))
        case .date: return .text(pick % 3 == 0 ? "" : "2025-07-0\(1 + pick % 9)")
        case .time: return .text(pick % 3 == 0 ? "" : "10:3\(pick % 10)")
        case .email: return .text(pick % 3 == 0 ? "nope" : "a@example.org")
        case .text, .multiline, .secure:
            return .text(pick % 4 == 0 ? "" : String(repeating: "x", count: Int(pick % 16)))
        case .computed: return .integer(Int64(pick % 20))  // refused
        }
    }

    /// The walk's view of one session: its values as of the last check.
    struct Watched {
        let id: String
        var values: SessionProperties
    }

    /// Takes the queued events and checks each watched session's
    /// `PropertiesChanged` against a full diff of its snapshots.
    static func check(_ service: ServiceHarness, _ watched: inout [Watched], after move: String) throws {
        let events = service.act { $0.takeEvents() }
        for index in watched.indices {
            let id = watched[index].id
            // Before the read, which loads a session the cache dropped.
            let kept = service.act { $0.announcedDigests(of: id) }
            let fresh = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
            if let kept {
                #expect(kept == PropertyDigests(fresh), "after \(move): the digests kept for \(id) are not a fresh snapshot's")
            }
            let expected = fresh.changed(since: watched[index].values)
            var announced: [(names: [SessionProperty], now: SessionProperties)] = []
            for event in events {
                if case .propertiesChanged(id, let names, let now) = event { announced.append((names, now)) }
            }
            if expected.isEmpty || expected == [.updatedAt] {
                #expect(announced.isEmpty, "after \(move): \(id) announced \(announced.map(\.names)), a full diff \(expected)")
            } else {
                #expect(announced.map(\.names) == [expected], "after \(move): a full diff names \(expected)")
                let now = announced.last
                #expect(
                    now.map { last in last.names.allSatisfy { last.now.value(of: $0) == fresh.value(of: $0) } } == true,
                    "after \(move): the announced values are not a full snapshot's")
            }
            // A session the read loaded has its values worked out after
            // the call (as the bus front end does after a read's reply). A
            // cache of one holds nothing (a session goes as it comes).
            service.act { $0.settleLoaded() }
            let settled = service.act { $0.announcedDigests(of: id) }
            if service.act({ $0.cacheCapacity }) > 1 || settled != nil {
                #expect(
                    settled == PropertyDigests(fresh),
                    "after \(move): the digests of \(id), cached or just loaded, are not a fresh snapshot's")
            }
            watched[index].values = fresh
        }
    }

    /// One call picked by `r` on `id`: an answer to a field of the current
    /// step (without a plugin validator), Continue, Back, GoTo, SetLocale,
    /// or a submit (its action answered at once, with success or failure)
    /// or Cancel. Refused calls are part of the walk.
    ///
    /// `checkpoint` runs between two changes of one call: after the start of
    /// a submit, before its action answers.
    static func move(
        _ service: ServiceHarness, _ id: String, _ r: UInt64, checkpoint: () throws -> Void
    ) async throws -> String {
        let session = try service.perform { service throws(FlowdError) in try service.read(id) { $0 } }
        let flow = session.flow
        switch r % 10 {
        case 0, 1, 2, 3:
            let fields = flow.step(session.currentStepID)?.fields.filter { $0.validators.isEmpty } ?? []
            guard !fields.isEmpty else { return "SetAnswers (no field)" }
            let field = fields[Int(r >> 8) % fields.count]
            let value = value(for: field, pick: r >> 16)
            let reply = Answers<FieldErrors>()
            service.act { $0.setAnswers(id, [field.id: value], reply: reply.reply) }
            #expect(reply.result != nil, "SetAnswers without a validator is answered at once")
            return "SetAnswers \(field.id)=\(value)"
        case 4, 5:
            let reply = Answers<FieldErrors>()
            service.act { $0.continueStep(id, reply: reply.reply) }
            try await answerSubmit(service, reply: reply, success: r & 0x100 == 0, checkpoint: checkpoint)
            return "Continue"
        case 6:
            _ = try? service.perform { service throws(FlowdError) in try service.back(id) }
            return "Back"
        case 7:
            let targets = flow.steps.map(\.id) + ["review"]
            let target = targets[Int(r >> 8) % targets.count]
            _ = try? service.perform { service throws(FlowdError) in try service.goTo(id, step: target) }
            return "GoTo \(target)"
        case 8:
            let tag = ["en", "de", "es", "fr-CA"][Int(r >> 8) % 4]
            let reply = Answers<Void>()
            service.act { $0.setLocale(id, tag, reply: reply.reply) }
            #expect(reply.result != nil, "SetLocale without providers is answered at once")
            return "SetLocale \(tag)"
        default:
            if session.state == .submitting {
                _ = try? service.perform { service throws(FlowdError) in try service.cancel(id) }
                return "Cancel"
            }
            let reply = Answers<Void>()
            service.act { $0.submit(id, reply: reply.reply) }
            try await answerSubmit(service, reply: reply, success: r & 0x100 == 0, checkpoint: checkpoint)
            return "Submit"
        }
    }

    /// When `reply` waits for a submit action, answers the action (after
    /// `checkpoint`).
    static func answerSubmit<Value>(
        _ service: ServiceHarness, reply: Answers<Value>, success: Bool, checkpoint: () throws -> Void
    ) async throws {
        guard reply.result == nil else { return }
        let call = try await service.nextPluginCall()
        try checkpoint()
        call.submit(success ? .success(SubmitReceipt(["ticket": .string("T-1")])) : .failure(.other, detail: "refused"))
        _ = try await service.answer(reply)
    }

    @Test("random walks through the example and test flows, with sessions in the cache and read back from the store",
          arguments: [16, 1])
    func walks(cacheCapacity: Int) async throws {
        let service = try ServiceHarness(flows: try Self.flows(), cacheCapacity: cacheCapacity)
        // A linear congruential generator, its high bits mixed down: a
        // repeatable walk.
        var state = UInt64(cacheCapacity) &* 7919
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
        for flow in ["trip", "quick", "onboarding", "survey", "registration", "device-enrolment"] {
            // Two sessions in turn: with a cache of one, each call reads its
            // session back from the store, with no values announced before.
            var watched: [Watched] = []
            for _ in 0..<2 {
                let id = try service.start(flow)
                let values = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
                watched.append(Watched(id: id, values: values))
            }
            _ = service.events()
            var changes = 0
            for step in 0..<150 {
                let r = next()
                let id = watched[step % 2].id
                service.clock.advance(by: .seconds(1))
                let before = watched.map(\.values)
                let move = try await Self.move(service, id, r) {
                    try Self.check(service, &watched, after: "\(flow) move \(step): the start of a submit")
                }
                try Self.check(service, &watched, after: "\(flow) move \(step): \(move)")
                if watched.map(\.values) != before { changes += 1 }
            }
            #expect(changes > 50, "the walk through \(flow) changed something on most calls")
        }
    }

    /// Every example flow in `flows/`, by file name.
    static func exampleFlows() throws -> [String: String] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("flows")
        var flows: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            flows[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return flows
    }

    /// Answers the plugin calls made until `reply` has its answer, as `pick`
    /// says: a field validator accepts or refuses, a step validator finds
    /// nothing, a submit succeeds or fails, a provider gives two options or
    /// no prefill. `checkpoint` runs before each answer: the change made
    /// before the plugins were asked is checked on its own.
    static func answerPlugins<Value>(
        _ service: ServiceHarness, _ reply: Answers<Value>, pick: UInt64, checkpoint: () throws -> Void
    ) async throws {
        var answered: UInt64 = 0
        while reply.result == nil {
            var call: FakePlugins.Call?
            try await service.drive(until: {
                call = service.plugins.takeCall()
                return call != nil || reply.result != nil
            }, "a plugin call or the reply")
            guard let call else { return }
            try checkpoint()
            answered += 1
            let r = pick >> (8 + answered % 32)
            switch call.kind {
            case .field: call.field(r % 3 == 0 ? "refused by the validator" : nil)
            case .step: call.step([])
            case .submit:
                call.submit(r % 2 == 0 ? .success(SubmitReceipt(["ticket": .string("T-1")])) : .failure(.other, detail: "refused"))
            case .options: call.options(.success([ChoiceOption(id: "a", label: "A"), ChoiceOption(id: "b", label: "B")]))
            case .prefill: call.prefill(.success(nil))
            }
        }
    }

    /// One call picked by `r` on `id` of an example flow: an answer to any
    /// field of the current step (its validators answered), Continue, Back,
    /// Edit (GoTo a step, from Review or not) or Submit.
    static func exampleMove(
        _ service: ServiceHarness, _ id: String, _ r: UInt64, checkpoint: () throws -> Void
    ) async throws -> String {
        let session = try service.perform { service throws(FlowdError) in try service.read(id) { $0 } }
        let flow = session.flow
        switch r % 10 {
        case 0, 1, 2, 3, 4:
            let fields = flow.step(session.currentStepID)?.fields ?? []
            guard !fields.isEmpty else { return "SetAnswers (no field)" }
            let field = fields[Int(r >> 8) % fields.count]
            // A provider's options are the two the fake gives.
            let value = field.optionsFrom != nil && field.type == .choice
                ? AnswerValue.text(["a", "b", ""][Int(r >> 16) % 3]) : value(for: field, pick: r >> 16)
            let reply = Answers<FieldErrors>()
            service.act { $0.setAnswers(id, [field.id: value], reply: reply.reply) }
            try await answerPlugins(service, reply, pick: r, checkpoint: checkpoint)
            return "SetAnswers \(field.id)=\(value)"
        case 5, 6:
            let reply = Answers<FieldErrors>()
            service.act { $0.continueStep(id, reply: reply.reply) }
            try await answerPlugins(service, reply, pick: r, checkpoint: checkpoint)
            return "Continue"
        case 7:
            _ = try? service.perform { service throws(FlowdError) in try service.back(id) }
            return "Back"
        case 8:
            let targets = flow.steps.map(\.id)
            let target = targets[Int(r >> 8) % targets.count]
            _ = try? service.perform { service throws(FlowdError) in try service.goTo(id, step: target) }
            return "Edit \(target)"
        default:
            let reply = Answers<Void>()
            service.act { $0.submit(id, reply: reply.reply) }
            try await answerPlugins(service, reply, pick: r, checkpoint: checkpoint)
            return "Submit"
        }
    }

    /// With every session cached: a session the cache drops forgets its
    /// plugin verdicts (they live in memory only), which moves
    /// `CanContinue` without a call; ``walks(cacheCapacity:)`` reads
    /// sessions back from the store, without validators.
    @Test("every example flow: answers, Continue, Back, Edit and Submit announce what a full snapshot diff names, with both of SetAnswers' scopes")
    func everyExampleFlow() async throws {
        let flows = try Self.exampleFlows()
        let service = try ServiceHarness(flows: flows, cacheCapacity: 64)
        let ids = flows.keys.map { String($0.dropLast(".json".count)) }.sorted()
        let definitions = service.act { service in ids.compactMap { service.catalog.flow($0) } }
        #expect(definitions.count == ids.count, "every example flow loads")
        // Both kinds of flow are walked: where an answer's effects stay on
        // its step (no path worked out after SetAnswers) and where not.
        #expect(
            definitions.filter(\.answersStayOnTheirStep).map(\.id) == ["onboarding", "registration", "support-request"])
        var state: UInt64 = 104_729
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
        for flow in ids {
            var watched: [Watched] = []
            for _ in 0..<2 {
                let reply = Answers<String>()
                service.act { $0.startSession(flowID: flow, locale: nil, prefill: [:], uid: 1000, reply: reply.reply) }
                try await Self.answerPlugins(service, reply, pick: 0) {}
                let id = try #require(reply.result).get()
                let values = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
                watched.append(Watched(id: id, values: values))
            }
            _ = service.events()
            var changes = 0
            for step in 0..<200 {
                let r = next()
                let id = watched[step % 2].id
                service.clock.advance(by: .seconds(1))
                let before = watched.map(\.values)
                let move = try await Self.exampleMove(service, id, r) {
                    try Self.check(service, &watched, after: "\(flow) move \(step): before a plugin's answer")
                }
                try Self.check(service, &watched, after: "\(flow) move \(step): \(move)")
                if watched.map(\.values) != before { changes += 1 }
            }
            #expect(changes > 60, "the walk through \(flow) changed something on most calls")
        }
    }

    @Test("after a reload that changes the flow, the digests kept equal a fresh snapshot's and the change is announced",
          arguments: [false, true])
    func reloadKeepsDigests(evicted: Bool) throws {
        let service = try ServiceHarness(cacheCapacity: 2)
        let id = try service.start("quick")
        try service.setAnswers(id, ["stars": .integer(4)])
        let before = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
        if evicted {
            // Two more sessions: over the capacity of two, the oldest go.
            _ = try service.start("quick")
            _ = try service.start("quick")
        }
        _ = service.events()
        #expect((service.act { $0.announcedDigests(of: id) } == nil) == evicted)
        let longer = TestFlows.quick.replacingOccurrences(
            of: "\"maxLength\": 200}]}",
            with: "\"maxLength\": 200}]},\n {\"id\": \"contact\", \"title\": \"Contact\", \"fields\": [{\"id\": \"mail\", \"type\": \"email\", \"label\": \"Mail\"}]}")
        try service.reload(writing: "quick.json", longer)
        let events = service.act { $0.takeEvents() }
        let fresh = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
        service.act { $0.settleLoaded() }
        #expect(service.act { $0.announcedDigests(of: id) } == PropertyDigests(fresh))
        #expect(fresh.changed(since: before).contains(.stepCount))
        var named: [[SessionProperty]] = []
        for event in events { if case .propertiesChanged(id, let names, _) = event { named.append(names) } }
        // A session the cache held moves to the new flow now; one it had
        // dropped reads the new flow when loaded and announces nothing.
        #expect(named == (evicted ? [] : [fresh.changed(since: before)]))
    }

    @Test("a session loaded from the store (here by the owner check of a restarted flowd) waits to be settled; then its digests are a fresh snapshot's, and its first change is announced as a full diff says")
    func loadedSessionSettles() throws {
        let first = try ServiceHarness()
        let id = try first.start("quick")
        _ = first.events()
        let service = try ServiceHarness(continuing: first)
        #expect(!service.act { $0.hasUnsettledSessions })
        _ = try service.perform { service throws(FlowdError) in try service.owner(of: id) }
        #expect(service.act { $0.hasUnsettledSessions }, "the load waits for its settle")
        #expect(service.act { $0.announcedDigests(of: id) } == nil)
        service.act { $0.settleLoaded() }
        #expect(!service.act { $0.hasUnsettledSessions })
        let before = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
        #expect(service.act { $0.announcedDigests(of: id) } == PropertyDigests(before))
        try service.setAnswers(id, ["stars": .integer(4)])
        let events = service.act { $0.takeEvents() }
        let after = try service.perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
        var named: [[SessionProperty]] = []
        for event in events { if case .propertiesChanged(id, let names, _) = event { named.append(names) } }
        let expected = after.changed(since: before)
        #expect(named == (expected == [.updatedAt] ? [] : [expected]))
        #expect(service.act { $0.announcedDigests(of: id) } == PropertyDigests(after))
    }

    @Test("digests: equal values have equal digests, a changed value changes its property's digest only, and update names the moved ones in order")
    func digests() {
        var values = SessionProperties(id: "0123", flowID: "quick")
        values.path = [PathStep(step: "a", title: "A", status: .current), PathStep(step: "b", title: "B", status: .upcoming)]
        values.visibleFields = ["x", "y"]
        values.receipt = ["ticket": .string("T-1")]
        let digests = PropertyDigests(values)
        #expect(digests == PropertyDigests(values))
        var changed = values
        changed.path[1].status = .done
        changed.visibleFields = ["y", "x"]
        changed.stepIndex = 2
        changed.announcement = "Step 2 of 2"
        changed.receipt = ["ticket": .string("T-2")]
        let moved = PropertyDigests(changed)
        #expect(SessionPropertySet.all.filter { moved[$0] != digests[$0] } == [.stepIndex, .path, .announcement, .receipt, .visibleFields])
        var kept = digests
        #expect(kept.update([.revision, .path, .stepIndex, .state], to: changed) == [.stepIndex, .path])
        #expect(kept != moved, "the properties not asked for keep their digests")
        #expect(kept.update(.all, to: changed) == [.announcement, .receipt, .visibleFields])
        #expect(kept == moved)
        // An empty value's digest (0, not hashed) differs from any other's.
        var empty = SessionProperties(id: "0123", flowID: "quick")
        empty.flowTitle = ""
        var filled = empty
        filled.lastError = "x"
        filled.path = [PathStep(step: "", title: "", status: .done)]
        filled.visibleFields = [""]
        filled.receipt = ["": .string("")]
        filled.flowTitle = " "
        #expect(
            SessionPropertySet.all.filter { PropertyDigests(filled)[$0] != PropertyDigests(empty)[$0] }
                == [.lastError, .path, .receipt, .visibleFields, .flowTitle])
    }

    @Test("each property's PropertiesChanged entry written from the typed value has the bytes of its DBusValue's")
    func entriesMatchValues() throws {
        var values = SessionProperties(id: "0123456789abcdef0123456789abcdef", flowID: "quick")
        values.owner = 1000
        values.locale = "de"
        values.state = .failed
        values.currentStep = "rating"
        values.stepIndex = 2
        values.stepCount = 5
        values.canContinue = true
        values.continueLabel = "Weiter"
        values.returningToReview = true
        values.lastError = "nope"
        values.createdAt = 1_700_000_000_000_000
        values.updatedAt = 1_700_000_000_000_001
        values.path = [PathStep(step: "a", title: "Ä", status: .done), PathStep(step: "review", title: "", status: .current)]
        values.announcement = "Schritt 2 von 5"
        values.receipt = ["ticket": .string("T-1"), "count": .uint32(3)]
        values.visibleFields = ["x", "other"]
        values.flowTitle = "Quick"
        values.revision = 7
        for property in SessionProperty.allCases {
            var typed = WireEncoder()
            typed.byte(1)  // so that the entry's padding is not empty
            try typed.write { (writer) throws(DBusError) in try values.writeEntry(property, into: &writer) }
            var generic = WireEncoder()
            generic.byte(1)
            generic.align(8)
            generic.string(property.rawValue)
            try generic.variant(values.value(of: property))
            #expect(typed.bytes == generic.bytes, "\(property)")
        }
        // And the empty path and list, whose arrays still pad to their elements.
        values.path = []
        values.visibleFields = []
        for property in [SessionProperty.path, .visibleFields] {
            var typed = WireEncoder()
            try typed.write { (writer) throws(DBusError) in try values.writeEntry(property, into: &writer) }
            var generic = WireEncoder()
            generic.string(property.rawValue)
            try generic.variant(values.value(of: property))
            #expect(typed.bytes == generic.bytes, "empty \(property)")
        }
    }

    @Test("InterfacesAdded written from the typed values has the bytes of its DBusValue arguments, metadata in declaration order")
    func interfacesAddedMatchesValues() throws {
        var values = SessionProperties(id: "0123456789abcdef0123456789abcdef", flowID: "quick")
        values.owner = 1000
        values.state = .review
        values.currentStep = "review"
        values.stepIndex = 3
        values.stepCount = 4
        values.canGoBack = true
        values.continueLabel = "Absenden"
        values.createdAt = 1_700_000_000_000_000
        values.updatedAt = 1_700_000_000_000_002
        values.path = [PathStep(step: "a", title: "secret title", status: .done)]
        values.lastError = "quoted answer"
        values.flowTitle = "Quick"
        values.flowDescription = "Äpfel"
        values.revision = 9
        let path = try #require(FlowBus.sessionPath(of: values.id))
        var typed = WireEncoder()
        try ObjectManagerInterface.writeInterfacesAdded(path, values, into: &typed)
        let metadata = SessionProperty.allCases.filter(\.isMetadata).map {
            DBusDictEntry(key: .string($0.rawValue), value: .variant(values.value(of: $0)))
        }
        let generic: [DBusValue] = [
            .objectPath(path),
            .dictionary(keyType: .string, valueType: "a{sv}", [
                DBusDictEntry(key: .string(FlowBus.sessionInterface.rawValue), value: .dictionary(keyType: .string, valueType: .variant, metadata)),
            ]),
        ]
        var expected = WireEncoder()
        for argument in generic { try expected.value(argument) }
        #expect(typed.bytes == expected.bytes)
        // The same values as the dictionary the generic signal sent, and no answer-bearing property.
        let read = try DBusValue.decoding(signature: ObjectManagerInterface.interfacesAddedSignature) { (body) throws(DBusError) in
            try ObjectManagerInterface.writeInterfacesAdded(path, values, into: &body)
        }
        #expect(read.first == .objectPath(path))
        guard case .dictionary(_, _, let interfaces)? = read.last, interfaces.count == 1,
              case .dictionary(_, _, let entries) = interfaces[0].value else {
            Issue.record("not one interface with a dictionary: \(read)")
            return
        }
        var sent: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let name) = entry.key, case .variant(let value) = entry.value else { continue }
            sent[name] = value
        }
        #expect(sent == values.metadata)
        #expect(sent["Path"] == nil && sent["LastError"] == nil)
    }

    @Test("a declared set lists its properties in declaration order, and the bits match allCases")
    func setOrder() {
        #expect(SessionProperty.allCases.enumerated().allSatisfy { $0.offset == $0.element.ordinal })
        #expect(Array(SessionPropertySet.all) == SessionProperty.allCases)
        let some: SessionPropertySet = [.revision, .id, .path]
        #expect(Array(some) == [.id, .path, .revision])
        #expect(some.contains(.path) && !some.contains(.state))
        #expect(!SessionPropertySet.changedByMoves.contains(.locale) && SessionPropertySet.changedByMoves.contains(.receipt))
        #expect(Array(SessionPropertySet.changedByAnswers).allSatisfy(SessionPropertySet.changedByMoves.contains))
    }
}
