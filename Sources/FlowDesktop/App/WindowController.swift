import Adwaita
import DBus
import FlowClient
import FlowKit
import FlowProtocol
import FlowdSystem

/// Drives the window from flowd, through ``FlowClient``: the start page
/// from `ListFlows` and `ListSessions`, a session's pages from `GetStep`,
/// `GetReview` and its properties, and the person's actions as calls.
///
/// It follows the session shown: every `PropertiesChanged` and signal of it
/// (another client working on the same session included) re-reads the page,
/// the daemon's `Announcement`s go to the window's live region, and when
/// flowd restarts the client reconnects and the page is read again. Answers
/// are sent as the person types, a moment after the last key (debounced
/// `SetAnswers`); a Continue, Back or Edit sends what is pending first.
///
/// Everything runs on the main actor; the calls await FlowClient on its own
/// loop thread, so GTK's loop is never blocked, not even by a Submit that
/// waits for the flow's submit action.
@MainActor
package final class WindowController {
    /// What the window opens first.
    package enum Opening: Sendable, Equatable {
        case start
        case flow(String)
        case session(String)
    }

    /// How long after the last change answers are sent.
    static let answerDelayMilliseconds = 300

    private let client: FlowClient
    private let bus: BusChoice
    private let locale: String
    private let strings: AppStrings
    private let opening: Opening
    /// Prints each screen shown and its transition, the field ids of each
    /// page read and the keys of each answer set sent (`FLOWD_GTK_TRACE=1`;
    /// names only, never an answer).
    private let trace: Bool
    private weak var window: FlowWindow?
    private let calls = CallQueue()

    /// The start page's subscription (SessionNew and SessionRemoved redraw it).
    private var startEvents: FlowEvents?

    /// The session shown, and what was last read of it.
    private var session: String?
    private var sessionEvents: FlowEvents?
    private var properties: SessionProperties?
    private var page: StepPage?
    private var review: ReviewPage?
    /// Answers typed and not sent yet, and answers sent whose reply has not come.
    private var unsent: [String: AnswerValue] = [:]
    private var inFlight: [String: AnswerValue] = [:]
    private var debounce = 0
    private var refreshQueued = false
    /// A Continue, Back, GoTo or Close of the session is under way.
    private var navigating = false
    /// This window's Submit (or a Continue that submits) is waiting for its reply.
    private var submitRunning = false

    /// What the notice's Try again does.
    private var retryOpening: Opening?
    /// The session opened from the command line, and whether it was sent.
    private var commandLineSession: String?
    private var commandLineSessionSent = false
    /// flowd could not be reached when last tried.
    private var unreachable = false

    /// A controller opening `opening` with `client`, on `bus`, in `locale`.
    package init(
        client: FlowClient, bus: BusChoice, locale: String, strings: AppStrings, opening: Opening, trace: Bool = false
    ) {
        self.trace = trace
        self.client = client
        self.bus = bus
        self.locale = locale
        self.strings = strings
        self.opening = opening
    }

    /// The program's exit status once the window closed (see `flowd-gtk --help`).
    package var exitStatus: Int32 {
        if unreachable { return SysExits.unavailable.rawValue }
        if commandLineSession != nil, !commandLineSessionSent { return 1 }
        return 0
    }

    /// Starts showing `opening` in `window`.
    package func run(in window: FlowWindow) {
        self.window = window
        Task { await open(opening) }
    }

    // MARK: - What the person did

    /// Everything the window reports.
    package func handle(_ event: WindowEvent) {
        switch event {
        case .answers(let answers): answered(answers)
        case .continueStep: continuePressed()
        case .enterPressed: enterPressed()
        case .backToReview: move { client, id throws(FlowClientError) in try await client.goTo(id, step: "review") }
        case .back: move { client, id throws(FlowClientError) in try await client.back(id) }
        case .edit(let step): move { client, id throws(FlowClientError) in try await client.goTo(id, step: step) }
        case .cancelSubmit: cancelSubmit()
        case .startFlow(let flow): Task { await open(.flow(flow)) }
        case .resume(let id): Task { await open(.session(id)) }
        case .discard(let id): discard(id)
        case .retry: Task { await open(retryOpening ?? opening) }
        case .close: close()
        }
    }

    private func open(_ opening: Opening) async {
        retryOpening = nil
        switch opening {
        case .start:
            await showStart()
        case .flow(let flow):
            do {
                let id = try await client.startSession(flow: flow, locale: locale, prefill: [:])
                unreachable = false
                if self.opening == opening { commandLineSession = id }
                await follow(id)
            } catch {
                showNotice(error, retry: opening)
            }
        case .session(let id):
            if self.opening == opening { commandLineSession = id }
            await follow(id)
        }
    }

    /// Escape or the close button: a session in progress is kept and the
    /// window says so on the start page; elsewhere the window closes.
    private func close() {
        let state = properties?.state
        guard session != nil, state != .submitted else {
            quit()
            return
        }
        Task {
            await flushAnswers()
            await showStart()
            window?.showToast(strings(.sessionKept))
        }
    }

    private func quit() {
        stopFollowing()
        startEvents?.cancel()
        window?.destroy()
    }

    private func discard(_ id: String) {
        Task {
            await calls.run {
                await reporting { () throws(FlowClientError) in try await client.close(id) }
            }
            await showStart()
        }
    }

    // MARK: - The start page

    private func showStart() async {
        stopFollowing()
        do {
            let flows = try await flowsInLocale()
            var entries: [SessionEntry] = []
            for listing in try await client.listSessions() where listing.state != .submitted {
                do {
                    let page = try await client.step(listing.id)
                    entries.append(SessionEntry(page: page, properties: try await client.properties(listing.id)))
                } catch where error.flowdName == .notFound {
                    continue  // closed or expired meanwhile
                }
            }
            guard session == nil else { return }  // a session was opened meanwhile
            unreachable = false
            entries.sort { $0.updatedAt > $1.updatedAt }
            let sorted = flows.sorted { $0.title < $1.title }
            window?.setFlowTitle("")
            show(.start(StartScreen(flows: sorted, sessions: entries)))
            if startEvents == nil { await watchStart() }
        } catch {
            showNotice(error, retry: .start)
        }
    }

    /// The flows with their titles and descriptions in the window's language,
    /// resolved by flowd with its fallback (`ListFlowsWithOptions`). A tag
    /// flowd refuses as malformed gets the flows' default texts, as an
    /// unknown language would.
    private func flowsInLocale() async throws(FlowClientError) -> [FlowSummary] {
        do {
            return try await client.listFlows(locale: locale)
        } catch where error.flowdName == .invalidArgs {
            return try await client.listFlows()
        }
    }

    /// Redraws the start page when a session starts or goes, or flowd comes back.
    private func watchStart() async {
        guard let events = try? await client.events() else { return }
        startEvents = events
        Task {
            for await event in events {
                switch event {
                case .manager, .reconnected:
                    guard session == nil, startEvents === events else { continue }
                    await showStart()
                default:
                    continue
                }
            }
        }
    }

    // MARK: - Following a session

    private func follow(_ id: String) async {
        stopFollowing()
        startEvents?.cancel()
        startEvents = nil
        session = id
        do {
            let events = try await client.events(for: id)
            guard session == id else {
                events.cancel()
                return
            }
            sessionEvents = events
            Task {
                for await event in events { received(event, about: id) }
            }
            await calls.run { await refresh() }
            if session == id, let page { window?.announce(page.announcement) }
        } catch {
            session = nil
            showNotice(error, retry: .session(id))
        }
    }

    private func stopFollowing() {
        sessionEvents?.cancel()
        sessionEvents = nil
        session = nil
        properties = nil
        page = nil
        review = nil
        unsent = [:]
        inFlight = [:]
        debounce += 1
        navigating = false
        submitRunning = false
    }

    private func received(_ event: FlowEvent, about id: String) {
        guard session == id else { return }
        switch event {
        case .session(_, .announcement(let text)):
            window?.announce(text)
            requestRefresh()
        case .session, .propertiesChanged:
            requestRefresh()
        case .manager(.sessionRemoved(let removed)) where removed == id:
            Task {
                await showStart()
                window?.showToast(strings(.sessionGone))
            }
        case .serviceLost:
            window?.showToast(strings(.connectionLost))
        case .reconnected:
            window?.showToast(strings(.reconnected))
            requestRefresh()
        default:
            break
        }
    }

    /// Reads the session again soon (once for a burst of changes).
    private func requestRefresh() {
        guard !refreshQueued else { return }
        refreshQueued = true
        Task {
            await calls.run {
                refreshQueued = false
                await refresh()
            }
        }
    }

    /// Reads the session's properties and page (and Review) and shows them.
    /// Runs in ``calls``.
    private func refresh() async {
        guard let id = session else { return }
        do {
            let properties = try await client.properties(id)
            let page = try await client.step(id)
            let review = page.kind == .review ? try await client.review(id) : nil
            guard session == id else { return }
            if trace { Console.line("read: \(page.id) fields=\(page.fields.map(\.id).joined(separator: ","))") }
            self.properties = properties
            self.page = page
            self.review = review
            if id == commandLineSession, properties.state == .submitted { commandLineSessionSent = true }
            render()
        } catch where error.flowdName == .notFound {
            guard session == id else { return }
            await showStart()
            window?.showToast(strings(.sessionGone))
        } catch {
            report(error)
        }
    }

    /// Shows what was last read, with the answers not yet acknowledged in place.
    private func render() {
        guard let window, let properties, let page else { return }
        window.setFlowTitle(page.flowTitle)
        if submitRunning || properties.state == .submitting {
            show(.submitting(page))
            return
        }
        if properties.state == .submitted {
            show(.success(page, receipt: ReceiptLines.make(properties.receipt, referenceLabel: strings(.receiptReference))))
            return
        }
        let failed = properties.state == .failed && !properties.lastError.isEmpty && page.error == properties.lastError
        let shown = SessionPage(withPending(page), submitFailed: failed, returningToReview: properties.returningToReview)
        if page.kind == .review, let review {
            show(.review(shown, review))
        } else {
            show(.step(shown))
        }
    }

    private func show(_ screen: Screen) {
        guard let transition = window?.show(screen), trace else { return }
        // Names and transitions only: never an answer.
        Console.line("screen: \(Navigation.identity(of: screen)) \(transition.rawValue)")
    }

    /// `page` with the answers typed but not acknowledged yet, so a re-read
    /// that was under way while the person typed never undoes what they did.
    private func withPending(_ page: StepPage) -> StepPage {
        var page = page
        for (key, answer) in inFlight.merging(unsent, uniquingKeysWith: { $1 }) {
            if let i = page.fields.firstIndex(where: { $0.id == key }) {
                guard !page.fields[i].isSecure else { continue }
                page.fields[i].value = WireValue.answer(answer)
            } else if let i = page.fields.firstIndex(where: { $0.otherKey == key }), case .text(let text) = answer {
                page.fields[i].otherValue = text
            }
        }
        return page
    }

    // MARK: - Answers and moves

    private func answered(_ answers: [String: AnswerValue]) {
        guard session != nil else { return }
        unsent.merge(answers) { $1 }
        debounce += 1
        let generation = debounce
        MainLoop.after(milliseconds: Self.answerDelayMilliseconds) { [weak self] in
            guard let self, generation == self.debounce else { return }
            Task { await self.flushAnswers() }
        }
    }

    /// Sends the answers typed so far now, after the calls queued before.
    private func flushAnswers() async {
        debounce += 1
        await calls.run { await sendAnswers() }
    }

    /// `SetAnswers` with what is pending, then a re-read. Runs in ``calls``.
    private func sendAnswers() async {
        guard let id = session, !unsent.isEmpty else { return }
        let answers = unsent
        unsent = [:]
        inFlight.merge(answers) { $1 }
        if trace { Console.line("set: \(answers.keys.sorted().joined(separator: ","))") }
        let values = answers.mapValues(WireValue.answer)
        await reporting { () throws(FlowClientError) in try await client.setAnswers(id, values) }
        inFlight = [:]
        await refresh()
    }

    /// Sends the pending answers, then makes the move `call`, then re-reads;
    /// when `call` says the step refused to move (a Continue), its errors show.
    private func navigate(_ call: @escaping @MainActor (FlowClient, String) async throws(FlowClientError) -> Bool) {
        guard let id = session, !navigating, !submitRunning else { return }
        navigating = true
        Task {
            await flushAnswers()
            await calls.run {
                var refused = false
                await reporting { () throws(FlowClientError) in refused = try await call(client, id) }
                await refresh()
                if refused { window?.revealErrors() }
            }
            if session == id { navigating = false }
        }
    }

    /// A move that flowd makes or refuses outright (Back, GoTo): ``navigate(_:)``.
    private func move(_ call: @escaping @MainActor (FlowClient, String) async throws(FlowClientError) -> Void) {
        navigate { client, id throws(FlowClientError) in
            try await call(client, id)
            return false
        }
    }

    /// Enter in a field: the answer just typed may not be sent yet (and
    /// Continue not enabled yet), so it is sent first, then the main button's
    /// action runs if the step can go on.
    private func enterPressed() {
        guard let id = session else { return }
        Task {
            await flushAnswers()
            guard session == id, let page, let properties else { return }
            let shown = SessionPage(page, returningToReview: properties.returningToReview)
            if shown.primaryEnabled { handle(shown.primaryEvent) }
        }
    }

    private func continuePressed() {
        guard let id = session, let page, let properties, !navigating, !submitRunning else { return }
        if page.kind == .review {
            submit(id, continuing: false)
        } else if Self.continueSubmits(page: page, path: properties.path) {
            submit(id, continuing: true)
        } else {
            navigate { client, id throws(FlowClientError) in !(try await client.continueStep(id)).isEmpty }
        }
    }

    /// True when Continue on `page` submits: the last step of a flow without Review.
    nonisolated static func continueSubmits(page: StepPage, path: [PathStep]) -> Bool {
        page.kind != .review && path.last?.step == page.id && !path.contains { $0.step == "review" }
    }

    /// Submit (or the Continue that submits), outside the call queue: the
    /// reply comes when the action ends, and the page goes on following
    /// the session meanwhile (the spinner, Cancel, another client's changes).
    private func submit(_ id: String, continuing: Bool) {
        submitRunning = true
        Task {
            await flushAnswers()
            render()
            var refused = false
            var failure: FlowClientError?
            do throws(FlowClientError) {
                if continuing {
                    refused = !(try await client.continueStep(id)).isEmpty
                } else {
                    try await client.submit(id)
                }
            } catch {
                failure = error
            }
            guard session == id else { return }
            submitRunning = false
            await calls.run { await refresh() }
            switch failure?.kind {
            case nil:
                if refused { window?.revealErrors() }
            case .flowd(.validationFailed)?:
                // flowd moved to the step that is not finished: its errors show.
                window?.revealErrors()
            case .flowd(.cancelled)?:
                if let page, !page.notSentLabel.isEmpty { window?.showToast(page.notSentLabel) }
            case .flowd(.submitFailed)?, .flowd(.timeout)?:
                break  // the page carries the localized message under the button
            default:
                if let failure { report(failure) }
            }
        }
    }

    private func cancelSubmit() {
        guard let id = session else { return }
        Task { await reporting { () throws(FlowClientError) in try await client.cancel(id) } }
    }

    // MARK: - Failures

    /// Runs `call`; its failure is reported (``report(_:)``).
    private func reporting(_ call: () async throws(FlowClientError) -> Void) async {
        do {
            try await call()
        } catch {
            report(error)
        }
    }

    /// A call failed: the standard error says why (for the person running
    /// the program), and a lost connection is said in the window too.
    private func report(_ error: FlowClientError) {
        Console.error("flowd-gtk: \(error)")
        if bus.unreachableMessage(error, flowd: "") != nil { window?.showToast(strings(.connectionLost)) }
    }

    /// What the window was opening cannot be shown: a notice with the reason and Try again.
    private func showNotice(_ error: FlowClientError, retry: Opening) {
        Console.error("flowd-gtk: \(error)")
        retryOpening = retry
        let reason = bus.unreachableMessage(error, flowd: FlowdLocation.current())
        unreachable = reason != nil
        window?.setFlowTitle("")
        show(.notice(NoticeScreen(
            icon: reason != nil ? "network-offline-symbolic" : "dialog-warning-symbolic",
            title: strings(reason != nil ? .unreachableTitle : .notAvailableTitle),
            description: reason ?? error.message, retryLabel: strings(.retry))))
    }
}
