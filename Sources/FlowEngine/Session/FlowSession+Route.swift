import FlowKit

// The path the answers predict, where the session is on it, and the moves
// between steps that every operation shares.
extension FlowSession {
    /// N and M of "Step N of M" on path `p`.
    @inline(__always) func progress(_ p: [Int]) -> (index: Int, count: Int) { progress(p, at: flow.stepIndex[record.currentStep]) }

    /// ``progress(_:)`` with `current`, the current step's index (nil off
    /// a step), looked up by the caller: a snapshot asks several of these
    /// and looked the step's id up for each (a string hashed, some 450).
    func progress(_ p: [Int], at current: Int?) -> (index: Int, count: Int) {
        let count = p.count + (flow.hasReview ? 1 : 0)
        guard let si = current else { return (count, count) }
        return ((p.firstIndex(of: si) ?? 0) + 1, count)
    }

    /// ``progress(_:)`` and ``canGoBack(route:)`` for a page of step `si`,
    /// the current one, on `p`: the step's place on the path found once
    /// (each of the two looked the current step up by its id again, some
    /// 320 instructions a page).
    func place(ofCurrent si: Int, on p: [Int]) -> (index: Int, count: Int, canGoBack: Bool) {
        let count = p.count + (flow.hasReview ? 1 : 0)
        let pos = p.firstIndex(of: si)
        let canGoBack = isMutable && (record.currentStep == Self.reviewID || (pos ?? 0) > 0)
        return ((pos ?? 0) + 1, count, canGoBack)
    }

    /// Continue accepted the step with its current answers, and they still pass.
    func isFinished(_ i: Int, in r: Resolution) -> Bool {
        guard record.completed.contains(flow.steps[i].id) else { return false }
        return flow.steps[i].kind == .content || issues(of: flow.steps[i], shownOnly: false, plugins: true, in: r).isEmpty
    }

    /// ``isFinished(_:in:)`` for each step, worked out once: what the
    /// moves and pages that ask about several steps pass around.
    func finishedSteps(_ r: Resolution) -> (Int) -> Bool {
        // Per step index: 0 not worked out yet, 1 finished, 2 not.
        var known = [UInt8](repeating: 0, count: flow.steps.count)
        return { i in
            if known[i] != 0 { return known[i] == 1 }
            let f = self.isFinished(i, in: r)
            known[i] = f ? 1 : 2
            return f
        }
    }

    @inline(__always) func canGoBack(route path: [Int]) -> Bool { canGoBack(route: path, at: flow.stepIndex[record.currentStep]) }

    /// ``canGoBack(route:)`` with the current step's index (``progress(_:at:)``).
    func canGoBack(route path: [Int], at current: Int?) -> Bool {
        guard isMutable else { return false }
        if record.currentStep == Self.reviewID { return true }
        guard let i = current, let pos = path.firstIndex(of: i) else { return false }
        return pos > 0
    }

    /// Where Continue leads from the current position (what its label says).
    enum ContinueTarget {
        /// On along the path (or on to Review).
        case nextStep
        /// Back to Review after an Edit, nothing unfinished on the way.
        case backToReview
        /// The last step of a flow without Review: Continue submits.
        case finish
        /// Review: Continue is Submit.
        case submit
    }

    /// Where Continue leads from here; nil once complete.
    @inline(__always) func continueTarget(route path: [Int], isFinished: (Int) -> Bool) -> ContinueTarget? {
        continueTarget(route: path, at: flow.stepIndex[record.currentStep], isFinished: isFinished)
    }

    /// ``continueTarget(route:isFinished:)`` with the current step's index
    /// (``progress(_:at:)``).
    func continueTarget(route path: [Int], at current: Int?, isFinished: (Int) -> Bool) -> ContinueTarget? {
        if record.currentStep == Self.reviewID { return .submit }
        guard let i = current else { return nil }
        guard let pos = path.firstIndex(of: i) else { return .nextStep }
        if record.returningToReview && flow.hasReview {
            let rest = path[(pos + 1)...]
            return rest.allSatisfy(isFinished) ? .backToReview : .nextStep
        }
        if pos == path.count - 1 && !flow.hasReview { return .finish }
        return .nextStep
    }

    var isMutable: Bool { record.state != .submitting && record.state != .submitted }

    func requireMutable() throws(SessionError) {
        switch record.state {
        case .submitting: throw SessionError(.invalidState, "a submit is running; wait for it or cancel it")
        case .submitted: throw SessionError(.invalidState, "the session is submitted; its answers can no longer change")
        case .editing, .review, .failed: return
        }
    }

    // MARK: Moves

    /// What a screen reader says when step `i` arrives: "Step 2 of 4, Day and time".
    func arrival(atStep i: Int, path p: [Int]) -> SessionMessage {
        let count = p.count + (flow.hasReview ? 1 : 0)
        let index = (p.firstIndex(of: i) ?? 0) + 1
        return .builtin(.stepAnnouncement, [
            "n": .verbatim(String(index)), "m": .verbatim(String(count)), "title": .piped(flow.steps[i].title),
        ])
    }

    /// ``arrival(atStep:path:)`` in words: filled into the announcement's
    /// template kept with the flow's page texts for the locale (the page's
    /// own announcement, ``currentStep()``), which equals what the general
    /// words say; past the cache's bound, said by them.
    func arrivalWords(atStep i: Int, path p: [Int]) -> String {
        guard let page = flow.pageTexts.kept(for: record.locale, make: { SessionPresenter(self).pageTexts() }) else {
            return words(arrival(atStep: i, path: p))
        }
        let count = p.count + (flow.hasReview ? 1 : 0)
        let index = (p.firstIndex(of: i) ?? 0) + 1
        let title = page.steps[i].title
        return page.stepAnnouncement.fill(Self.number(index), Self.number(count), title.pipes ? words.piped(title.text) : title.text)
    }

    /// The Review page's title.
    var reviewTitle: SessionMessage {
        flow.review?.title.map { .piped($0) } ?? .builtin(.review)
    }

    /// The receipt's `message`, else the flow's success message.
    var successMessage: SessionMessage? {
        if let m = record.receipt?["message"]?.stringValue, !m.isEmpty { return .verbatim(m) }
        return flow.submit?.successMessage.map { .piped($0) }
    }

    /// Moves to step `i` on the path `p` the caller worked out (a move
    /// changes no answer, so the path after it is the same; working it out
    /// again cost some 900 instructions per move).
    mutating func moveTo(_ i: Int, on p: [Int], now: Int64) {
        let step = flow.steps[i]
        record.currentStep = step.id
        if !record.visited.contains(step.id) { record.visited.append(step.id) }
        record.state = .editing
        record.lastError = nil
        record.announcement = arrivalWords(atStep: i, path: p)
        record.announcementSequence &+= 1
        record.announcedWarnings = currentWarnings()
        record.updatedAt = now
        scratch.pendingContinue = nil
    }

    mutating func moveToReview(now: Int64) {
        record.currentStep = Self.reviewID
        record.state = .review
        record.lastError = nil
        record.returningToReview = false
        record.announcedWarnings = [:]
        let (index, count) = progress(route())
        announce(.builtin(.stepAnnouncement, [
            "n": .verbatim(String(index)), "m": .verbatim(String(count)), "title": reviewTitle,
        ]))
        record.updatedAt = now
        scratch.pendingContinue = nil
    }

    mutating func settle(receipt: [String: JSONValue], now: Int64) {
        record.state = .submitted
        record.currentStep = Self.completeID
        record.returningToReview = false
        record.lastError = nil
        record.receipt = receipt
        record.submittedAt = record.submittedAt ?? now
        announce(successMessage ?? .builtin(.submitted))
        record.updatedAt = now
        // Settled answers never change again: the secrets are not needed any more.
        scratch.secure = [:]
        scratch.clearVerdicts()
    }

    /// Says `message` to the person: the new announcement, one event more.
    mutating func announce(_ message: SessionMessage) {
        record.announcement = words(message)
        record.announcementSequence &+= 1
    }

    /// Leaving `failed` by editing: the state follows the position again.
    mutating func leaveFailedState() {
        guard record.state == .failed else { return }
        record.state = record.currentStep == Self.reviewID ? .review : .editing
        record.lastError = nil
    }
}

extension FlowSession {
    /// `n` in decimal digits: the numbers of a progress line ("Step 2 of
    /// 5") read from a table for the usual sizes (`String(n)` formats the
    /// integer each time, some 150 instructions, twice a page and a move).
    static func number(_ n: Int) -> String {
        n >= 0 && n < smallNumbers.count ? smallNumbers[n] : String(n)
    }

    /// "0" … "99", small strings (no allocation, nothing to retain).
    private static let smallNumbers: [String] = (0..<100).map { String($0) }
}
