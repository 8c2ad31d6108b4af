import FlowClient
import FlowEngine
import FlowProtocol
import FlowdSystem

/// A submit as a person lives it: it runs in flowd while the wizard waits
/// for its answer and for a key at once. `c` cancels it (`Session.Cancel`);
/// Ctrl-C says it is still running and offers to cancel it, wait on, or
/// leave it to finish; a second Ctrl-C leaves, saying so.
extension Wizard {
    /// How a wait for a submit ended.
    enum SubmitWait {
        /// flowd answered the call.
        case finished(Result<[String: String], FlowClientError>)
        /// The person left; the submit goes on in flowd.
        case leftRunning
    }

    /// What the wizard does after a submit that did not succeed.
    enum AfterFailure {
        /// Stay on the page; the message is printed next to the prompt.
        /// `retry`: the main key now reads "Try again".
        case stay(retry: Bool)
        /// The session moved (a step is not finished): show the step it is on.
        case moved
    }

    /// Runs `body` (Submit, or the Continue that submits a flow without
    /// Review) and waits for its answer, a `c` to cancel it, or Ctrl-C.
    func submitting(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> [String: String]
    ) throws(CLIError) -> SubmitWait {
        let wake: (read: FileDescriptor, write: FileDescriptor)
        do {
            wake = try FileDescriptor.pipe()
        } catch {
            throw CLIError(.software, "cannot wait for the submit: \(error)")
        }
        let answer = LockedValue<Result<[String: String], FlowClientError>?>(nil)
        let calls = self.calls
        do {
            try SystemThread.detach(name: "flowctl-submit") {
                let result = Result { () throws(FlowClientError) in try calls.request(body) }
                answer.withLock { $0 = result }
                try? wake.write.writeAll([Self.answered])
            }
        } catch {
            throw CLIError(.software, "cannot start the submit: \(error)")
        }
        guard handlesInterrupts else { return try waitForAnswer(answer, wake: wake.read) }
        let interrupted = LockedValue(false)
        let goesOn = "\n" + goesOnMessage + "\n"
        return try Interrupts.whileHandling({ signal in
            // SIGTERM, SIGHUP, or a second Ctrl-C: leave, and say the submit goes on.
            guard signal == Signal.interrupt.rawValue, !interrupted.withLock({ $0 }) else {
                return .exit(status: 128 + signal, message: goesOn)
            }
            interrupted.withLock { $0 = true }
            try? wake.write.writeAll([Self.interrupt])
            return .keepRunning
        }) { () throws(CLIError) in
            try waitForAnswer(answer, wake: wake.read)
        }
    }

    /// The bytes on the wake pipe: flowd answered; Ctrl-C was pressed.
    private static let answered: UInt8 = 1
    private static let interrupt: UInt8 = 2

    private func waitForAnswer(
        _ answer: LockedValue<Result<[String: String], FlowClientError>?>, wake: FileDescriptor
    ) throws(CLIError) -> SubmitWait {
        let cancelKey = ("c", builtin(.cancel))
        let spinning = builtin(.submitting) + "  " + actionLine([cancelKey])
        // After Ctrl-C: the choices, asked at a prompt.
        let choices = actionLine([cancelKey, (text(.keyEnter), text(.keepWaiting)), ("q", text(.leaveRunning))])
        var asking = false
        var inputEnded = false
        while true {
            if let result = answer.withLock({ $0 }) { return .finished(result) }
            let waited: LineWait
            if inputEnded {
                waited = try LineWaits.until(readable: wake.rawValue)
            } else if asking {
                waited = try input.waitForLine(echo: true, waking: wake.rawValue, prompt: { say(style.bold("> ")) })
            } else {
                // Typing is not echoed under the spinner; the line is read on Enter.
                waited = try self.spinning(spinning) { () throws(CLIError) -> LineWait in
                    try input.waitForLine(echo: false, waking: wake.rawValue, prompt: {})
                }
            }
            switch waited {
            case .woken:
                var bytes = [UInt8](repeating: 0, count: 16)
                let count = (try? wake.read(into: &bytes)) ?? 0
                if bytes[0..<count].contains(Self.interrupt), answer.withLock({ $0 }) == nil {
                    asking = true
                    say("\n" + style.yellow(text(.submitStillRunning)) + "\n" + style.dim(choices) + "\n")
                }
            case .line(let line):
                switch AnswerTyping.halfWidth(line).trimmed.lowercased() {
                case "c":
                    // The submit's own answer says how it ended (Cancelled, or done first).
                    try? calls.request { [session] s async throws(FlowClientError) in try await s.cancel(session) }
                    asking = false
                case "q" where asking:
                    return .leftRunning
                case "":
                    asking = false
                default:
                    say(style.dim(asking ? choices : spinning) + "\n")
                }
            case .ended:
                inputEnded = true
            }
        }
    }

    /// Says why a submit did not succeed, next to the prompt that follows.
    func submitFailure(_ error: FlowClientError) throws(CLIError) -> AfterFailure {
        switch error.flowdName {
        case .submitFailed?, .timeout?:
            // flowd's message for the person, in their language.
            let lastError = try properties().lastError
            let message = lastError.isEmpty ? ErrorText.sentence(for: error, locale: locale) : lastError
            say("\n" + style.red("✗ " + message) + "\n")
            return .stay(retry: true)
        case .cancelled?:
            say("\n" + style.yellow(builtin(.notSent)) + "\n")
            return .stay(retry: false)
        case .validationFailed?:
            let properties = try properties()
            let title = properties.path.first { $0.step == properties.currentStep }?.title ?? properties.currentStep
            say("\n" + style.yellow(text(.notFinished, ["step": title])) + "\n")
            return .moved
        case .invalidState?:
            say("\n" + style.red("✗ " + ErrorText.sentence(for: error, locale: locale)) + "\n")
            return .moved
        default:
            throw CLIError(error, bus: calls.bus, locale: locale, asksPassword: calls.asksPassword)
        }
    }

    /// Resuming while a submit runs: waits until it ends, and offers to cancel it.
    func waitForRunningSubmit() throws(CLIError) -> Outcome {
        let wait = try submitting { [session] s async throws(FlowClientError) in
            while try await s.properties(session).state == .submitting {
                try? await Task.sleep(for: .milliseconds(250))
            }
            return [:]
        }
        if case .leftRunning = wait { return .leftRunning }
        return .next
    }
}
