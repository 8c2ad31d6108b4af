import Adwaita
import FlowProtocol

/// The start page: the flows to begin, and the person's unfinished sessions
/// with Resume and Discard.
@MainActor
final class StartPageView: Page {
    private let body = PageColumn()
    private var firstFocus: Widget?

    var root: Widget { body.root }
    var defaultButton: Button? { nil }

    init(_ screen: StartScreen, context: PageContext) {
        let strings = context.strings
        if !screen.sessions.isEmpty {
            let group = PreferencesGroup(
                title: strings(.sessionsHeading), description: strings(.sessionsDescription))
            let now = context.now()
            for session in screen.sessions {
                let line = RelativeTime.sessionLine(session, now: now, strings: strings)
                let row = ActionRow(title: session.flowTitle, subtitle: line, wraps: true)
                let resume = Button(label: strings(.resume))
                resume.verticalAlignment = .center
                resume.setAccessibleLabel(strings(.resumeSession, ["title": session.flowTitle]))
                resume.setAccessibleDescription(line)
                let discard = Button(iconName: "user-trash-symbolic", accessibleLabel: strings(.discardSession, ["title": session.flowTitle]))
                discard.verticalAlignment = .center
                discard.addStyleClass("flat")
                discard.tooltip = strings(.discard)
                discard.setAccessibleDescription(line)
                row.addSuffix(resume)
                row.addSuffix(discard)
                let id = session.id
                resume.onClicked { context.send(.resume(id)) }
                discard.onClicked { context.send(.discard(id)) }
                group.add(row)
                if firstFocus == nil { firstFocus = resume }
            }
            body.column.append(group)
        }
        let flows = PreferencesGroup(title: strings(.flowsHeading), description: strings(.flowsDescription))
        if screen.flows.isEmpty {
            flows.add(ActionRow(title: strings(.noFlows)))
        }
        for flow in screen.flows {
            let row = ActionRow(title: flow.title, subtitle: flow.description, wraps: true)
            row.addSuffix(Image(iconName: "go-next-symbolic"))
            let id = flow.id
            row.onActivated { context.send(.startFlow(id)) }
            flows.add(row)
            if firstFocus == nil { firstFocus = row }
        }
        body.column.append(flows)
    }

    func focusFirst() { firstFocus?.grabFocus() }
}
