import Adwaita
import FlowdSystem

/// `flowd-gtk`: parses the command line, picks the language, and runs the
/// GTK application with the window.
package enum DesktopApp {
    package static let applicationID = "org.flowd.Flows"

    /// Runs the program; returns its exit status.
    package static func run(arguments: [String]) -> Int32 {
        let options: Options
        do {
            options = try Options.parse(Array(arguments.dropFirst()))
        } catch {
            Console.error("flowd-gtk: \(error)\n\n\(Options.usage)")
            return 2
        }
        if options.help {
            Console.line(Options.usage)
            return 0
        }
        if options.listFixtures {
            for (name, summary) in Fixtures.catalog { Console.line(name + "\t" + summary) }
            return 0
        }
        guard let fixture = options.fixture else {
            // The window is not wired to flowd yet (docs/desktop.md).
            Console.error(
                "flowd-gtk: this build shows built-in example screens only: run flowd-gtk --fixture NAME "
                    + "(flowd-gtk --list-fixtures lists them); opening flowd's flows comes with the D-Bus client")
            return 2
        }
        guard Fixtures.catalog.contains(where: { $0.name == fixture }) else {
            Console.error("flowd-gtk: no fixture named '\(fixture)'; flowd-gtk --list-fixtures lists them")
            return 2
        }
        let locale = LocaleChoice.resolve(option: options.locale, environment: CurrentProcess.environmentVariable)
        return MainActor.assumeIsolated {
            runApplication(programName: arguments.first ?? "flowd-gtk", locale: locale, fixture: fixture)
        }
    }

    @MainActor
    private static func runApplication(programName: String, locale: String, fixture: String) -> Int32 {
        let strings = AppStrings(locale: locale)
        let application = Application(id: applicationID)
        // `@MainActor` tasks and DispatchQueue.main run on GLib's loop from here on.
        MainQueueBridge.install()
        var windows: [FlowWindow] = []
        application.onActivate {
            // After GTK's own start-up, which sets the direction from GTK's translations.
            Style.setRightToLeft(LocaleChoice.isRightToLeft(locale))
            Style.addStyleSheet(StyleSheet.css)
            let now = UInt64(max(WallClock.microsecondsSinceEpoch(), 0))
            let driver = FixtureDriver(name: fixture, fixtures: Fixtures(locale: locale, now: now))
            let window = FlowWindow(
                application: application, strings: strings, now: { UInt64(max(WallClock.microsecondsSinceEpoch(), 0)) },
                onEvent: { driver.handle($0) })
            windows.append(window)
            driver.run(in: window)
            window.present()
        }
        return application.run(programName: programName)
    }
}
