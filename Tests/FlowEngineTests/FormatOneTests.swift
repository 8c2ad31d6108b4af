import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// Format 1 files load and run unchanged: every shipped and test flow that is
/// format 1 (the examples that stayed format 1, the end-to-end flows, and the
/// format 1 versions of the examples that moved to format 2), walked at
/// random against the path and answers as format 1 defined them.
@Suite struct FormatOneTests {
    /// Every format 1 flow file of the repository.
    static let files: [String] = {
        let root = Fixture.root
        var out: [String] = []
        for dir in ["flows", "e2e/system/flows", "Tests/Fixtures/Flows/format1"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(dir).path)) ?? []
            for name in names.sorted() where name.hasSuffix(".json") { out.append("\(dir)/\(name)") }
        }
        return out
    }()

    static func load(_ file: String) throws -> FlowDefinition {
        let bytes = Array(try Data(contentsOf: Fixture.root.appendingPathComponent(file)))
        return try FlowLoader.load(bytes, fileName: file, capabilities: .any)
    }

    @Test("the files are there: three format 1 versions, the end-to-end flows and the shipped examples")
    func filesAreFound() throws {
        #expect(Self.files.filter { $0.hasPrefix("Tests/Fixtures/Flows/format1/") }.count == 3)
        #expect(Self.files.filter { $0.hasPrefix("e2e/") }.count >= 2)
        let formats = try Self.files.map { try Self.load($0).format }
        #expect(formats.filter { $0 == 1 }.count >= 8, "\(zip(Self.files, formats).map { "\($0) \($1)" })")
    }

    /// The path as format 1 defined it: the first step, then the first `next`
    /// rule whose field test holds, an answer off the path not given, an
    /// unset toggle false.
    static func legacyRoute(_ s: FlowSession) -> [Int] {
        let flow = s.flow
        var out: [Int] = []
        var onPath = Array(repeating: false, count: flow.steps.count)
        func answer(_ id: String) -> AnswerValue? {
            guard let loc = flow.fieldLocation[id], onPath[loc.step] else { return nil }
            if flow.steps[loc.step].fields[loc.field].type == .toggle { return s.record.answers[id] ?? .bool(false) }
            return s.record.answers[id]
        }
        func holds(_ c: Condition) -> Bool {
            switch c {
            case .equals(let f, let v): return v.matches(answer(f))
            case .oneOf(let f, let vs): return vs.contains { $0.matches(answer(f)) }
            case .notEmpty(let f, let expected): return (answer(f).map { !isBlank($0) } ?? false) == expected
            case .all(let cs): return cs.allSatisfy(holds)
            case .any(let cs): return cs.contains(where: holds)
            case .not(let c): return !holds(c)
            case .expr: return false
            }
        }
        var i = 0
        while i < flow.steps.count {
            out.append(i)
            onPath[i] = true
            let step = flow.steps[i]
            let target: StepTarget
            if step.next.isEmpty {
                target = i + 1 < flow.steps.count ? .step(flow.steps[i + 1].id) : .complete
            } else {
                target = step.next.first { $0.condition.map(holds) ?? true }?.target ?? .complete
            }
            guard case .step(let id) = target, let next = flow.stepIndex[id], next > i else { break }
            i = next
        }
        return out
    }

    /// The answers on the path as format 1 defined them.
    static func legacyAnswers(_ s: FlowSession) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for i in legacyRoute(s) {
            for f in s.flow.steps[i].fields where f.type != .secure {
                if f.type == .toggle {
                    out[f.id] = s.record.answers[f.id] ?? .bool(false)
                } else if let v = s.record.answers[f.id], !isBlank(v) {
                    out[f.id] = v
                    if f.other, s.chosenOther(v), let t = s.record.answers[f.otherKey], !isBlank(t) { out[f.otherKey] = t }
                }
            }
        }
        return out
    }

    @Test("each format 1 file loads as format 1, with no field logic and braces as plain text", arguments: files)
    func loadsAsFormatOne(file: String) throws {
        let flow = try Self.load(file)
        guard flow.format == 1 else { return }  // the examples that moved to format 2
        #expect(!flow.hasFieldLogic && !flow.pipes && flow.computedTypes.isEmpty)
        #expect(flow.steps.allSatisfy { $0.rules.allSatisfy { $0.level == .error } })
    }

    @Test("a random walk through each format 1 flow: the same path, answers and pages as format 1 gave", arguments: files)
    func walk(file: String) throws {
        let flow = try Self.load(file)
        guard flow.format == 1 else { return }
        var dynamic: [String: [ChoiceOption]] = [:]
        for step in flow.steps { for field in step.fields where field.optionsFrom != nil { dynamic[field.id] = weekdayOptions } }
        var session = try Fixture.session(flow, options: dynamic)
        var random = SplitMix(seed: UInt64(file.utf8.count) &* 104_729)
        for move in 0..<300 {
            ProgressSnapshotTests.move(&session, random.next(), now: Int64(move + 10))
            #expect(session.route() == Self.legacyRoute(session), "\(file) after move \(move)")
            #expect(session.answersOnPath(includeSecure: false) == Self.legacyAnswers(session), "\(file) after move \(move)")
            if let step = flow.step(session.currentStepID) {
                #expect(session.currentStep().fields.map(\.id) == step.fields.map(\.id), "every field is shown")
            }
        }
    }
}
