import DBus
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol
import FlowdSystem

// `flowctl run FLOW --answers FILE`: a whole session without a person, for an
// installer or a fleet of machines. flowd drives the session with the file's
// answers (StartSession's `answers` option): it follows the branches they
// choose and stops at the first step that does not validate.
extension CommandRunner {
    /// Starts a session of `flow` driven by the answer file `file`, then
    /// reports where it stopped; with `--submit` submits it when every step
    /// passed, with `--dry-run` closes it (nothing is kept or submitted).
    ///
    /// Exit status: 0 when every step passed (and, with `--submit`, the
    /// submit succeeded); 1 when a step did not validate (its errors are
    /// printed; without `--dry-run` the session stays for `flowctl resume`)
    /// or the submit failed; 65 for a file the flow refuses.
    func runAnswers(flow: String, file: String) throws(CLIError) -> ExitCode {
        let submit = command.flag("submit")
        let dryRun = command.flag("dry-run")
        if submit && dryRun { throw .usage("--submit and --dry-run exclude each other (--dry-run submits nothing)") }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(file, limit: AnswerFile.maxBytes)
        } catch {
            throw CLIError(.notFound, "cannot read \(quote(file)): \(error.reason)")
        }
        let parsed: (answers: [String: AnswerValue], flow: String?)
        do {
            parsed = try AnswerFile.parse(bytes)
        } catch {
            throw CLIError(.dataError, "\(file): \(error.message)")
        }
        if let named = parsed.flow, named != flow {
            throw CLIError(.dataError, "\(file) holds answers of flow \(quote(named)), not \(quote(flow))")
        }
        let locale = try requestedLocale()
        let answers = parsed.answers.mapValues(WireValue.answer)
        let id = try call { s async throws(FlowClientError) in
            try await s.startSession(flow: flow, locale: locale, prefill: [:], answers: answers)
        }
        let step = try call { s async throws(FlowClientError) in try await s.step(id) }
        let properties = try call { s async throws(FlowClientError) in try await s.properties(id) }
        // flowd leaves the session on the first step that did not pass, with
        // its errors shown; a session with none passed every step.
        var errors: [String: String] = [:]
        if !step.error.isEmpty { errors[""] = step.error }
        for field in step.fields where !field.error.isEmpty { errors[field.id] = field.error }

        if !errors.isEmpty {
            out(Render.progress(step, locale: properties.locale, style: style))
            printErrors(errors, step: step)
            if dryRun {
                try call { s async throws(FlowClientError) in try await s.close(id) }
                out(style.dim("Dry run: nothing was submitted, and the session is closed.") + "\n")
            } else {
                out("Session \(id) stopped at step \(quote(step.id)). Mend it with: flowctl resume \(id)\n")
            }
            return .failure
        }
        if dryRun {
            try call { s async throws(FlowClientError) in try await s.close(id) }
            out(style.green("✓") + " Every step of \(quote(flow)) passed. Dry run: nothing was submitted, and the session is closed.\n")
            return .success
        }
        guard submit else {
            if step.kind == .review {
                let review = try call { s async throws(FlowClientError) in try await s.review(id) }
                out(Render.review(review, style: style))
            }
            out(style.green("✓") + " Every step passed. Session \(id) is ready; send it with: flowctl submit \(id)\n")
            return .success
        }
        return try self.submit(id)
    }
}
