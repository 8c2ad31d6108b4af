import Adwaita
import FlowClient
import FlowProtocol
import FlowdSystem

/// `flowd-gtk`: parses the command line, picks the language, connects a
/// ``FlowClient`` to flowd and runs the GTK application with the window.
package enum DesktopApp {
    package static let applicationID = "org.flowd.Flows"

    /// Runs the program; returns its exit status.
    package static func run(arguments: [String]) -> Int32 {
        let options: Options
        do {
            options = try Options.parse(Array(arguments.dropFirst()))
        } catch {
            Console.error("flowd-gtk: \(error)\n\n\(Options.usage)")
            return SysExits.usage.rawValue
        }
        if options.help {
            Console.line(Options.usage)
            return 0
        }
        if let id = options.resume, FlowBus.sessionPath(of: id) == nil {
            Console.error("flowd-gtk: --resume: '\(id)' is not a session id (32 lowercase hex characters; flowctl sessions lists them)")
            return SysExits.usage.rawValue
        }
        let locale = LocaleChoice.resolve(option: options.locale, environment: CurrentProcess.environmentVariable)
        let client: FlowClient
        do {
            // A window is a person at a desktop, whose polkit agent can ask
            // for a password when a call needs authentication (a flow that
            // names a polkit action, on the system bus).
            var configuration = FlowClient.Configuration(bus: options.bus.connectionBus)
            configuration.allowsInteractiveAuthorization = true
            client = try FlowClient(configuration)
        } catch {
            Console.error("flowd-gtk: \(error)")
            return SysExits.software.rawValue
        }
        let opening: WindowController.Opening =
            options.flow.map { .flow($0) } ?? options.resume.map { .session($0) } ?? .start
        return MainActor.assumeIsolated {
            runApplication(
                programName: arguments.first ?? "flowd-gtk", locale: locale,
                controller: WindowController(
                    client: client, bus: options.bus, locale: locale, strings: AppStrings(locale: locale),
                    opening: opening, trace: CurrentProcess.environmentVariable("FLOWD_GTK_TRACE") == "1"))
        }
    }

    @MainActor
    private static func runApplication(programName: String, locale: String, controller: WindowController) -> Int32 {
        let strings = AppStrings(locale: locale)
        let application = Application(id: applicationID)
        // `@MainActor` tasks and DispatchQueue.main run on GLib's loop from here on.
        MainQueueBridge.install()
        var windows: [FlowWindow] = []
        application.onActivate {
            // After GTK's own start-up, which sets the direction from GTK's translations.
            Style.setRightToLeft(LocaleChoice.isRightToLeft(locale))
            Style.addStyleSheet(StyleSheet.css)
            let window = FlowWindow(
                application: application, strings: strings, now: { UInt64(max(WallClock.microsecondsSinceEpoch(), 0)) },
                onEvent: { [weak controller] in controller?.handle($0) })
            windows.append(window)
            controller.run(in: window)
            window.present()
        }
        let status = application.run(programName: programName)
        return status == 0 ? controller.exitStatus : status
    }
}
