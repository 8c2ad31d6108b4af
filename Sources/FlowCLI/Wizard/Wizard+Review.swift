import FlowClient
import FlowEngine
import FlowProtocol

/// Review: each step numbered for Edit, Enter submits.
extension Wizard {
    func reviewPage(_ step: StepPage) throws(CLIError) -> Outcome {
        let review = try calls.call { [session] s async throws(FlowClientError) in try await s.review(session) }
        let properties = try properties()
        say("\n" + Render.progress(step, locale: locale, style: style))
        if !step.description.isEmpty && step.description != review.note { say(style.dim(step.description) + "\n") }
        say("\n" + Render.review(review, numbered: true, style: style))

        // After a failed submit the main key tries again, and the message
        // stands right above the prompt.
        var retry = properties.state == .failed
        if retry && !properties.lastError.isEmpty { say("\n" + style.red("✗ " + properties.lastError) + "\n") }
        func actions() -> [(key: String, label: String)] {
            var actions = [(text(.keyEnter), retry ? builtin(.tryAgain) : step.continueLabel)]
            if !review.groups.isEmpty {
                let range = review.groups.count == 1 ? "1" : "1–\(review.groups.count)"
                actions.append((range, text(.editStep)))
            }
            if step.canGoBack { actions.append(("b", step.backLabel)) }
            actions.append(("q", text(.quit)))
            return actions
        }
        say("\n" + style.dim(actionLine(actions())) + "\n")

        while true {
            say(style.bold("> "))
            guard let line = try input.readLine(echo: true) else { return .ended }
            let word = AnswerTyping.halfWidth(line).trimmed.lowercased()
            if let number = Int(word), number >= 1, number <= review.groups.count {
                let target = review.groups[number - 1].step
                try calls.call { [session] s async throws(FlowClientError) in try await s.goTo(session, step: target) }
                return .next
            }
            switch word {
            case "":
                let wait = try submitting { [session] s async throws(FlowClientError) in
                    try await s.submit(session)
                    return [:]
                }
                switch wait {
                case .leftRunning: return .leftRunning
                case .finished(.success): return .next
                case .finished(.failure(let error)):
                    switch try submitFailure(error) {
                    case .moved: return .next
                    case .stay(let again):
                        retry = again
                        say(style.dim(actionLine(actions())) + "\n")
                    }
                }
            case "b", ":back":
                guard step.canGoBack else { continue }
                try calls.call { [session] s async throws(FlowClientError) in try await s.back(session) }
                return .next
            case "q", ":quit":
                return .quit
            default:
                say(style.yellow(actionLine(actions())) + "\n")
            }
        }
    }
}
