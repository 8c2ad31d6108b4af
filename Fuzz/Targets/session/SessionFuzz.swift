// fuzz-session: the session state machine driven by random call sequences
// (answers of every type, good and bad, for fields on and off the step;
// Continue, Back, GoTo, Submit and how a submit ends; a restore from the
// stored record; a restart during a submit), checking after each call:
//
// - no invalid step is skipped: a step Continue leaves, and every step on
//   the path when a submit starts, passes the built-in checks;
// - Back follows the path: it lands on the step before, on the path as it
//   was (from Review, on the last step);
// - abandoned answers are never submitted: a submission holds only answers
//   to fields on the path it was made on;
// - a submitted session never changes, whatever is called on it;
// - the stored record restores to the same record, and the idempotency key
//   stays while the answers do.
import FlowKit
import Foundation
import FuzzSupport

@testable import FlowEngine

let flowText = """
    { "format": 1, "id": "trip", "title": "Plan a trip",
      "steps": [
        {"id": "welcome", "kind": "content", "title": "Welcome", "body": "Plan your trip."},
        {"id": "traveller", "title": "Traveller",
         "fields": [
           {"id": "name", "type": "text", "label": "Name", "required": true, "minLength": 2, "maxLength": 40,
            "pattern": "[A-Za-z ]+"},
           {"id": "email", "type": "email", "label": "Email", "required": true}]},
        {"id": "mode", "title": "Mode",
         "fields": [
           {"id": "mode", "type": "choice", "label": "How?", "required": true,
            "options": [{"id": "train", "label": "Train"}, {"id": "plane", "label": "Plane"}], "other": true}],
         "next": [{"if": {"field": "mode", "equals": "plane"}, "goto": "flight"}, {"goto": "extras"}]},
        {"id": "flight", "title": "Flight",
         "fields": [
           {"id": "seat", "type": "choice", "label": "Seat", "required": true,
            "options": [{"id": "window", "label": "Window"}, {"id": "aisle", "label": "Aisle"}]},
           {"id": "bags", "type": "number", "label": "Bags", "integer": true, "minimum": 0, "maximum": 3}]},
        {"id": "extras", "title": "Extras",
         "fields": [
           {"id": "extras", "type": "multichoice", "label": "Extras", "maxSelected": 2,
            "options": [{"id": "wifi", "label": "Wi-Fi"}, {"id": "meal", "label": "Meal"}, {"id": "lounge", "label": "Lounge"}]},
           {"id": "day", "type": "date", "label": "Day", "after": "2024-05-30"},
           {"id": "terms", "type": "toggle", "label": "I agree", "mustBeOn": true}]},
        {"id": "account", "title": "Account",
         "fields": [
           {"id": "password", "type": "secure", "label": "Password", "required": true, "minLength": 8},
           {"id": "confirm", "type": "secure", "label": "Confirm", "required": true}],
         "rules": [{"equals": ["password", "confirm"], "message": "Passwords do not match."}]}
      ],
      "review": {"title": "Check your trip"},
      "submit": {"action": "fuzz.submit"}
    }
    """

let flow = try? FlowLoader.load(flowText, fileName: "trip.json", capabilities: .any)
let clock = CivilDate(year: 2024, month: 6, day: 1).map { FixedClock(now: 1_717_236_000_000_000, today: $0) }
let fieldIDs = ["name", "email", "mode", "mode.other", "seat", "bags", "extras", "day", "terms", "password", "confirm", "nope"]
let texts = ["", "A", "Ada Lovelace", "ada@example.org", "not an email", "train", "plane", "window", "wifi", "meal",
    "2024-06-01", "2024-05-31", "2023-02-29", "correct horse", "x\u{0}y", String(repeating: "z", count: 5000)]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let flow, let clock else {
        require(false, "the fuzzer's own flow does not load")
        return 0
    }
    var input = FuzzInput(data, size)
    guard var session = try? FlowSession(flow: flow, id: "0123456789abcdef0123456789abcdef", owner: 1000,
        locale: input.pick(["en", "de", "ja"]) ?? "en", clock: clock)
    else { return 0 }
    var now: Int64 = 1
    var settled: SessionRecord?
    var running: SubmitRequest?
    var steps = 0
    while !input.isAtEnd && steps < 200 {
        steps += 1
        now += 1
        let before = session
        let path = session.route()
        switch input.below(11) {
        case 0, 1:
            _ = try? session.setAnswers(answers(&input), now: now)
        case 2, 3:
            guard case .some(let outcome) = try? session.continueStep(now: now) else { break }
            switch outcome {
            case .moved(let completion):
                checkFinished(before, step: completion.step)
            case .submit(let completion, let start):
                if let completion { checkFinished(before, step: completion.step) }
                if case .run(let request) = start { running = request; checkSubmission(session, request) }
            case .stayed, .checking, .noChange:
                break
            }
        case 4:
            guard (try? session.back(now: now)) != nil else { break }
            if before.currentStepID == FlowSession.reviewID {
                require(path.last.map { flow.steps[$0].id } == session.currentStepID, "Back from Review went elsewhere")
            } else if let here = flow.stepIndex[before.currentStepID], let position = path.firstIndex(of: here) {
                require(position > 0 && flow.steps[path[position - 1]].id == session.currentStepID,
                        "Back from \(before.currentStepID) went to \(session.currentStepID), not the step before on \(path)")
            } else {
                require(false, "Back succeeded off the path, from \(before.currentStepID)")
            }
        case 5:
            let target = input.pick(flow.steps.map(\.id) + [FlowSession.reviewID, "nowhere"]) ?? "review"
            _ = try? session.goTo(target, now: now)
        case 6:
            if case .some(.run(let request)) = try? session.beginSubmit(now: now) {
                running = request
                checkSubmission(session, request)
            }
        case 7:
            try? session.finishSubmit(receipt: SubmitReceipt(["reference": "R"]), now: now)
        case 8:
            try? session.failSubmit([.other, .timedOut, .localized("No room.")][input.below(3)], now: now)
        case 9:
            try? session.cancelSubmit(now: now)
        default:
            // Stored and read back, as after a restart (secure values are gone),
            // and a submit that was running is marked interrupted.
            let key = session.idempotencyKey
            // As the daemon stores it: its own encoder, JSONDecoder to read.
            guard let bytes = try? session.record.encodedJSON(),
                let stored = try? JSONDecoder().decode(SessionRecord.self, from: Data(bytes))
            else {
                require(false, "the record does not round-trip")
                break
            }
            require(stored == session.record, "the stored record reads back different")
            guard var restored = try? FlowSession(restoring: stored, flow: flow, clock: clock) else {
                require(false, "a stored record does not restore")
                break
            }
            restored.markInterrupted(now: now)
            require(restored.idempotencyKey == key, "a restart changed the idempotency key")
            session = restored
        }
        // Submitted: nothing changes it any more (the restore above rebuilt
        // the session from the same record).
        if let settled {
            require(session.record.answers == settled.answers && session.state == .submitted
                    && session.record.receipt == settled.receipt && session.record.revision == settled.revision,
                    "a submitted session changed")
        } else if session.state == .submitted {
            settled = session.record
        }
        if let request = running, session.state == .submitted {
            require(request.submission.idempotencyKey == session.idempotencyKey, "the answers changed while submitting")
        }
    }
    return 0
}

/// Answers for SetAnswers: fields of this step and others, typed right and wrong.
func answers(_ input: inout FuzzInput) -> [String: AnswerValue] {
    var out: [String: AnswerValue] = [:]
    for _ in 0..<(1 + input.below(3)) {
        guard let field = input.pick(fieldIDs) else { continue }
        switch input.below(6) {
        case 0: out[field] = .text(input.pick(texts) ?? "")
        case 1: out[field] = .text(input.string(limit: 24))
        case 2: out[field] = .list((0..<input.below(4)).map { _ in input.pick(["wifi", "meal", "lounge", "spa", ""]) ?? "" })
        case 3: out[field] = .bool(input.byte() & 1 == 1)
        case 4: out[field] = .integer(Int64(input.below(7)) - 2)
        default: out[field] = .number([0.5, 2.0, -1.0, .infinity, .nan][input.below(5)])
        }
    }
    return out
}

/// A step Continue accepted passed the built-in checks with the answers it had.
func checkFinished(_ before: FlowSession, step id: String) {
    guard let step = before.flow.step(id) else {
        require(false, "Continue completed a step the flow does not have: \(id)")
        return
    }
    let resolution = before.resolve(including: before.flow.stepIndex[id])
    require(before.issues(of: step, shownOnly: false, plugins: false, in: resolution).isEmpty, "Continue left \(id) with errors")
}

/// A submission is made of a finished path and only its answers.
func checkSubmission(_ session: FlowSession, _ request: SubmitRequest) {
    let resolution = session.resolve()
    let path = resolution.route
    for index in path {
        let step = session.flow.steps[index]
        require(session.issues(of: step, shownOnly: false, plugins: false, in: resolution).isEmpty,
                "submitted with \(step.id) unfinished")
    }
    let onPath = Set(path.flatMap { session.flow.steps[$0].fields.filter(resolution.shows).flatMap { [$0.id, $0.id + ".other"] } })
    for key in request.submission.answers.keys {
        require(onPath.contains(key), "submitted \(key), an answer off the path \(path)")
    }
    for key in request.submission.secureAnswers.keys {
        require(onPath.contains(key), "submitted the secure \(key), off the path")
    }
    require(request.submission.idempotencyKey == session.idempotencyKey, "the submission's key is not the session's")
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzSession) }
}
#endif
