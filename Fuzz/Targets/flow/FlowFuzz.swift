// fuzz-flow: the flow loader and linter on any bytes. A file is refused with
// problems that each name the file and say something, or loaded; a loaded
// flow lints the same again (it is deterministic), can start a session, and
// has its first step presented.
import FlowKit
import FuzzSupport

@testable import FlowEngine

let clock = CivilDate(year: 2024, month: 6, day: 1).map { FixedClock(now: 1_717_236_000_000_000, today: $0) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFlow(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let bytes = input.rest()
    let flow: FlowDefinition
    do {
        flow = try FlowLoader.load(bytes, fileName: "fuzz.json", capabilities: .any)
    } catch {
        require(!error.problems.isEmpty, "refused without a problem")
        for problem in error.problems {
            require(problem.description.hasPrefix("fuzz.json"), "a problem that does not name the file: \(problem)")
        }
        let again = try? FlowLoader.load(bytes, fileName: "fuzz.json", capabilities: .any)
        require(again == nil, "refused once, loaded the second time")
        return 0
    }
    require(!flow.steps.isEmpty, "a flow without steps was loaded")
    require((try? FlowLoader.load(bytes, fileName: "fuzz.json", capabilities: .any))?.fingerprint == flow.fingerprint,
            "loading the same bytes twice gave another flow")
    guard let clock else { return 0 }
    for locale in ["en", "de", "pt-BR", "ja"] {
        guard let session = try? FlowSession(flow: flow, id: "fuzz", owner: 1000, locale: locale, clock: clock) else {
            require(false, "a loaded flow cannot start a session")
            return 0
        }
        _ = session.currentStep()
        _ = session.review()
    }
    return 0
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzFlow) }
}
#endif
