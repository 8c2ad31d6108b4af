import Adwaita

/// The application window: a header bar, the pages in a stack that slides
/// between steps, toasts, and a live region that carries each step change's
/// announcement to screen readers (GTK 4.8 has no `gtk_accessible_announce`).
///
/// The window only renders screens and reports what the person did; it
/// never decides where the flow goes.
@MainActor
package final class FlowWindow {
    private let window: ApplicationWindow
    private let header: HeaderBar
    private let stack = Stack()
    private let toasts: ToastOverlay
    private let announcer = Label(role: .status)
    private let context: PageContext
    private var current: (screen: Screen, page: any Page)?
    /// Pages that slid out and are still in the stack until their transition ends.
    private var outgoing: [any Page] = []
    private var pageNumber = 0
    private let strings: AppStrings
    private let onEvent: @MainActor (WindowEvent) -> Void

    /// A window for `application`; `onEvent` receives everything the person does.
    package init(
        application: Application, strings: AppStrings, now: @escaping @MainActor () -> UInt64,
        onEvent: @escaping @MainActor (WindowEvent) -> Void
    ) {
        self.strings = strings
        self.onEvent = onEvent
        window = ApplicationWindow(application: application)
        window.title = strings(.appName)
        window.setDefaultSize(width: 720, height: 780)
        header = HeaderBar(title: strings(.appName))
        toasts = ToastOverlay(child: stack)
        toasts.expandsVertically = true
        announcer.addStyleClass("announcement")
        announcer.setAccessibleLabel("")
        let content = Box(.vertical)
        content.append(header)
        content.append(toasts)
        content.append(announcer)
        window.setContent(content)
        context = PageContext(strings: strings, send: onEvent, now: now)

        // Keyboard: Alt+Left goes back, Escape and the close button keep the session.
        window.addShortcut("<Alt>Left") { [weak self] in self?.backPressed() }
        window.addShortcut("Escape") { [weak self] in self?.send(.close) }
        // A page that slid out leaves the stack (and the accessibility tree) once it is gone from view.
        stack.onTransitionRunningChanged { [weak self] in self?.dropOutgoingPages() }
        window.onCloseRequest { [weak self] in
            self?.send(.close)
            return true  // the controller closes the window once the session is kept
        }
    }

    package func present() { window.present() }

    /// Closes the window for good.
    package func destroy() { window.destroy() }

    /// The flow's title under the app's name (empty on the start page).
    package func setFlowTitle(_ title: String) {
        header.set(title: strings(.appName), subtitle: title)
        window.title = title.isEmpty ? strings(.appName) : title
    }

    /// Shows `toast` over the page.
    package func showToast(_ text: String) { toasts.show(toast: text) }

    /// After a Continue the daemon refused: every error on the step shows.
    package func revealErrors() { (current?.page as? StepPageView)?.revealAllErrors() }

    /// The screen being shown.
    package var screen: Screen? { current?.screen }

    /// Shows `screen`: the same page updated in place, or a new page that
    /// slides in from the side it comes from (a crossfade with reduced
    /// motion). Returns the transition used.
    @discardableResult
    package func show(_ screen: Screen) -> StackTransition {
        let direction = Navigation.direction(from: current?.screen, to: screen)
        if direction == .same, let page = current?.page, update(page, with: screen) {
            current = (screen, page)
            return .none
        }
        let page = makePage(screen)
        pageNumber += 1
        stack.add(page.root, name: "page-\(pageNumber)")
        let transition = current == nil
            ? .none : Navigation.transition(direction, animationsEnabled: Style.animationsEnabled)
        stack.show(page.root, transition: transition)
        if let old = current?.page { outgoing.append(old) }
        current = (screen, page)
        dropOutgoingPages()
        window.setDefaultWidget(page.defaultButton)
        focusWhenShown(page)
        return transition
    }

    /// Focuses the page's first field once the page is on screen and laid out, so
    /// the page also scrolls to it (a focus given earlier cannot scroll).
    private func focusWhenShown(_ page: any Page) {
        let focus: @MainActor () -> Void = { [weak self, weak page] in
            MainLoop.whenIdle {
                guard let self, let page, self.current?.page === page else { return }
                page.focusFirst()
            }
        }
        // A stack shows a page at once when nothing animates: it may be mapped already.
        if page.root.isMapped { return focus() }
        var pending = true
        page.root.onMap {
            guard pending else { return }
            pending = false
            focus()
        }
    }

    private func dropOutgoingPages() {
        guard !stack.isTransitionRunning else { return }
        for page in outgoing { stack.remove(page.root) }
        outgoing.removeAll()
    }

    private func makePage(_ screen: Screen) -> any Page {
        switch screen {
        case .start(let s): return StartPageView(s, context: context)
        case .step(let s): return StepPageView(s, context: context)
        case .review(let s, let review): return ReviewPageView(s, review: review, context: context)
        case .submitting(let page): return SubmittingPageView(page, context: context)
        case .success(let page, let receipt): return SuccessPageView(page, receipt: receipt, context: context)
        case .notice(let notice): return NoticePageView(notice, context: context)
        }
    }

    /// Updates `page` in place; false when it cannot (a new page is built).
    private func update(_ page: any Page, with screen: Screen) -> Bool {
        switch (page, screen) {
        case (let p as StepPageView, .step(let s)) where p.canShow(s): p.update(s)
        case (let p as ReviewPageView, .review(let s, let review)): p.update(s, review: review)
        case (let p as SubmittingPageView, .submitting(let page)): p.update(page)
        case (let p as SuccessPageView, .success(let page, let receipt)): p.update(page, receipt: receipt)
        case (let p as NoticePageView, .notice(let notice)): p.update(notice)
        default: return false
        }
        return true
    }

    /// Puts the daemon's announcement in the live region; an assistive
    /// technology presents the change. The same text again is re-set so it
    /// is heard again.
    package func announce(_ text: String) {
        guard !text.isEmpty else { return }
        if announcer.text == text { announcer.text = "" }
        announcer.text = text
        announcer.setAccessibleLabel(text)
    }

    private func backPressed() {
        switch current?.screen {
        case .step(let s) where s.page.canGoBack: send(.back)
        case .review(let s, _) where s.page.canGoBack: send(.back)
        default: break
        }
    }

    private func send(_ event: WindowEvent) { onEvent(event) }
}
