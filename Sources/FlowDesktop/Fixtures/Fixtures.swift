import FlowEngine
import FlowKit

/// Built-in example screens for `--fixture NAME`: what the headless suite
/// drives and photographs until the window is wired to flowd. Their texts
/// stand in for the daemon's (English, and German to check a longer
/// language); nothing here is used outside fixture mode.
package struct Fixtures: Sendable {
    /// Every fixture name with what it shows.
    package static let catalog: [(name: String, summary: String)] = [
        ("start", "the start page: flows and unfinished sessions"),
        ("every-field", "one step with every field type"),
        ("contact", "a form step whose e-mail has an error (shown once touched); Continue dimmed"),
        ("content", "a content step with an icon"),
        ("review", "Review with \"Not given\" and a step \"Not finished\""),
        ("submitting", "a submit running: spinner and Cancel"),
        ("success", "the success page with a receipt"),
        ("failure", "Review after a failed submit: the message under the button, \"Try again\""),
        ("tour", "start page → three steps → Review → submit (cancel, fail, retry) → success, driven by the buttons"),
    ]

    /// German texts when the window speaks German, English otherwise.
    let german: Bool
    /// Now, for the sessions' "changed … ago".
    let now: UInt64

    package init(locale: String, now: UInt64) {
        german = AppStrings(locale: locale).catalogLocale == "de"
        self.now = now
    }

    func t(_ en: String, _ de: String) -> String { german ? de : en }

    /// The first screen of fixture `name`, or nil for an unknown name.
    package func screen(_ name: String) -> Screen? {
        switch name {
        case "start", "tour": return .start(start)
        case "every-field": return .step(everyField)
        case "contact": return .step(contact(canContinue: false))
        case "content": return .step(content)
        case "review": return .review(review(failure: nil))
        case "submitting": return .submitting(submitting)
        case "success": return .success(success)
        case "failure": return .review(review(failure: failure, unfinished: false))
        default: return nil
        }
    }

    // MARK: Pieces

    func progress(_ n: Int, _ m: Int = 4) -> StepProgress {
        StepProgress(index: n, count: m, label: t("Step \(n) of \(m)", "Schritt \(n) von \(m)"))
    }

    func announcement(_ n: Int, _ title: String, _ m: Int = 4) -> String {
        t("Step \(n) of \(m), \(title)", "Schritt \(n) von \(m), \(title)")
    }

    func actions(canContinue: Bool = true, canGoBack: Bool = true, returning: Bool = false) -> StepActions {
        StepActions(
            continueLabel: returning ? t("Back to review", "Zurück zur Übersicht") : t("Continue", "Weiter"),
            backLabel: t("Back", "Zurück"), canContinue: canContinue, canGoBack: canGoBack)
    }

    var optional: String { t("(optional)", "(optional)") }

    var failure: SubmitFailure {
        SubmitFailure(
            message: t("Couldn't send this. Try again.", "Senden fehlgeschlagen. Bitte erneut versuchen."),
            retryLabel: t("Try again", "Erneut versuchen"))
    }

    // MARK: Screens

    var start: StartScreen {
        StartScreen(
            flows: [
                FlowEntry(id: "consultation", title: t("Book a consultation", "Beratung buchen"),
                          description: t("Tell us what you need and pick a time that suits you.",
                                         "Sagen Sie uns, was Sie brauchen, und wählen Sie einen passenden Termin.")),
                FlowEntry(id: "registration", title: t("Create an account", "Konto erstellen"),
                          description: t("A name, an e-mail address and a password.", "Name, E-Mail-Adresse und Passwort.")),
                FlowEntry(id: "support-request", title: t("Ask for help", "Hilfe anfordern"),
                          description: t("Describe the problem; we answer within a day.", "Beschreiben Sie das Problem; wir antworten innerhalb eines Tages.")),
            ],
            sessions: [
                SessionEntry(id: "5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41", flowTitle: t("Book a consultation", "Beratung buchen"),
                             progressLabel: t("Step 3 of 4", "Schritt 3 von 4"), stepTitle: t("Contact details", "Kontaktdaten"),
                             updatedAt: now - 5 * 60 * 1_000_000),
                SessionEntry(id: "a41d3c9e0b2f48d7a6e51c8b9f0d2e37", flowTitle: t("Create an account", "Konto erstellen"),
                             progressLabel: t("Step 2 of 3", "Schritt 2 von 3"), stepTitle: t("Password", "Passwort"),
                             updatedAt: now - 3 * 3600 * 1_000_000),
            ])
    }

    var serviceStep: StepScreen {
        let title = t("Service", "Leistung")
        return StepScreen(
            id: "service", title: title,
            fields: [
                FieldModel(
                    id: "service", type: .choice, label: t("What can we help with?", "Wobei können wir helfen?"),
                    required: true,
                    options: [
                        OptionModel(id: "website", label: t("A website", "Eine Website"), icon: "applications-internet"),
                        OptionModel(id: "app", label: t("A desktop app", "Eine Desktop-App")),
                        OptionModel(id: "branding", label: t("Branding", "Markenauftritt")),
                    ],
                    other: OtherOption(label: t("Something else", "Etwas anderes"))),
            ],
            announcement: announcement(1, title), progress: progress(1), actions: actions(canGoBack: false))
    }

    var whenStep: StepScreen {
        let title = t("Day and time", "Tag und Uhrzeit")
        return StepScreen(
            id: "when", title: title, description: t("All times are in your time zone.", "Alle Zeiten in Ihrer Zeitzone."),
            fields: [
                FieldModel(id: "day", type: .date, label: t("Day", "Tag"), required: true,
                           hints: [t("After 2025-06-01", "Nach dem 2025-06-01")],
                           dateBounds: DateBounds(after: CivilDate(year: 2025, month: 6, day: 1))),
                FieldModel(id: "time", type: .time, label: t("Time", "Uhrzeit"), required: true, value: .text("09:30")),
            ],
            announcement: announcement(2, title), progress: progress(2), actions: actions())
    }

    func contact(canContinue: Bool, returning: Bool = false) -> StepScreen {
        let title = t("Contact details", "Kontaktdaten")
        return StepScreen(
            id: "contact", title: title,
            description: t("We use these only to confirm your booking.", "Wir verwenden sie nur, um Ihre Buchung zu bestätigen."),
            fields: [
                FieldModel(id: "name", type: .text, label: t("Name", "Name"), required: true, value: .text("Ada Lovelace"),
                           isSet: true),
                FieldModel(id: "email", type: .email, label: t("E-mail", "E-Mail"), placeholder: "name@example.com",
                           required: true, value: .text("ada@example"), isSet: true,
                           error: t("Please enter a valid email address, like name@example.com.",
                                    "Bitte eine gültige E-Mail-Adresse eingeben, z. B. name@beispiel.de.")),
                FieldModel(id: "phone", type: .text, label: t("Phone", "Telefon"),
                           help: t("Only if you would like a call back.", "Nur wenn Sie einen Rückruf wünschen."),
                           optionalMarker: optional),
            ],
            announcement: announcement(3, title), progress: progress(3),
            actions: actions(canContinue: canContinue, returning: returning))
    }

    var content: StepScreen {
        let title = t("Before you start", "Bevor Sie beginnen")
        return StepScreen(
            id: "intro", kind: .content, title: title,
            body: t("This takes about two minutes. You can stop at any time: your answers are kept, and you can continue later from the start page.",
                    "Das dauert etwa zwei Minuten. Sie können jederzeit aufhören: Ihre Antworten bleiben erhalten, und Sie können später auf der Startseite weitermachen."),
            icon: "dialog-information-symbolic",
            announcement: announcement(1, title, 5), progress: progress(1, 5), actions: actions(canGoBack: false))
    }

    var everyField: StepScreen {
        let title = t("Every field type", "Alle Feldtypen")
        return StepScreen(
            id: "every-field", title: title,
            description: t("One of each kind of question a flow can ask.", "Von jeder Art Frage eine."),
            fields: [
                FieldModel(id: "name", type: .text, label: t("Full name", "Vollständiger Name"), placeholder: "Ada Lovelace",
                           required: true, hints: [t("2 to 80 characters", "2 bis 80 Zeichen")]),
                FieldModel(id: "email", type: .email, label: t("E-mail", "E-Mail"), placeholder: "name@example.com",
                           required: true, value: .text("ada@"),
                           error: t("Please enter a valid email address, like name@example.com.",
                                    "Bitte eine gültige E-Mail-Adresse eingeben, z. B. name@beispiel.de.")),
                FieldModel(id: "password", type: .secure, label: t("Password", "Passwort"), required: true,
                           hints: [t("At least 12 characters", "Mindestens 12 Zeichen")]),
                FieldModel(id: "about", type: .multiline, label: t("About your project", "Über Ihr Projekt"),
                           help: t("A few sentences are enough.", "Ein paar Sätze genügen."), optionalMarker: optional),
                FieldModel(id: "pages", type: .number, label: t("Number of pages", "Anzahl der Seiten"), required: true,
                           hints: [t("A whole number from 1 to 500", "Eine ganze Zahl von 1 bis 500")],
                           numberRange: NumberRange(minimum: 1, maximum: 500, integer: true)),
                FieldModel(id: "budget", type: .number, label: t("Budget in euros", "Budget in Euro"),
                           optionalMarker: optional, hints: [t("At least 0", "Mindestens 0")],
                           numberRange: NumberRange(minimum: 0)),
                FieldModel(id: "day", type: .date, label: t("Start date", "Startdatum"), required: true,
                           hints: [t("After 2025-06-01 and before 2026-01-01", "Nach dem 2025-06-01 und vor dem 2026-01-01")],
                           dateBounds: DateBounds(after: CivilDate(year: 2025, month: 6, day: 1),
                                                  before: CivilDate(year: 2026, month: 1, day: 1))),
                FieldModel(id: "time", type: .time, label: t("Preferred time", "Bevorzugte Uhrzeit"), optionalMarker: optional),
                FieldModel(id: "newsletter", type: .toggle, label: t("Send me the newsletter", "Newsletter zusenden"),
                           help: t("About once a month. You can unsubscribe at any time.", "Etwa einmal im Monat. Jederzeit abbestellbar."),
                           value: .bool(true)),
                FieldModel(id: "terms", type: .toggle, label: t("I accept the terms", "Ich akzeptiere die Bedingungen"),
                           required: true, hints: [t("Must be on to continue", "Muss zum Fortfahren aktiviert sein")]),
                FieldModel(id: "service", type: .choice, label: t("What can we help with?", "Wobei können wir helfen?"),
                           required: true,
                           options: [
                               OptionModel(id: "website", label: t("A website with a shop and a blog", "Eine Website mit Shop und Blog"),
                                           icon: "applications-internet"),
                               OptionModel(id: "app", label: t("A desktop app for Linux", "Eine Desktop-App für Linux"),
                                           icon: "applications-system"),
                               OptionModel(id: "branding", label: t("Branding and a new logo", "Markenauftritt und neues Logo"),
                                           icon: "applications-graphics"),
                           ],
                           other: OtherOption(label: t("Something else", "Etwas anderes"), text: t("A printed brochure", "Eine gedruckte Broschüre")),
                           value: .text("other")),
                FieldModel(id: "channels", type: .multichoice, label: t("How should we contact you?", "Wie sollen wir Sie kontaktieren?"),
                           optionalMarker: optional,
                           options: [
                               OptionModel(id: "email", label: t("By e-mail to the address above", "Per E-Mail an die Adresse oben")),
                               OptionModel(id: "phone", label: t("By phone during office hours", "Telefonisch zu Bürozeiten")),
                               OptionModel(id: "post", label: t("By post to a postal address", "Per Post an eine Postanschrift")),
                           ],
                           value: .list(["email"]), hints: [t("Select all that apply", "Alle zutreffenden auswählen")]),
                FieldModel(id: "size", type: .choice, label: t("Team size", "Teamgröße"), required: true,
                           options: [
                               OptionModel(id: "solo", label: t("Just me", "Nur ich")),
                               OptionModel(id: "small", label: "2–10"),
                               OptionModel(id: "large", label: t("More than 10", "Mehr als 10")),
                           ], value: .text("small")),
                FieldModel(id: "topics", type: .multichoice, label: t("Topics", "Themen"), optionalMarker: optional,
                           options: [
                               OptionModel(id: "design", label: t("Design", "Gestaltung")),
                               OptionModel(id: "code", label: t("Code", "Code")),
                               OptionModel(id: "hosting", label: t("Hosting", "Hosting")),
                           ],
                           other: OtherOption(label: t("Other", "Andere")), hints: [t("Select all that apply", "Alle zutreffenden auswählen")]),
                FieldModel(id: "estimate", type: .computed, label: t("Estimated price", "Geschätzter Preis"),
                           value: .text(t("1,440 €", "1.440 €")), isSet: true),
            ],
            announcement: announcement(2, title), progress: progress(2), actions: actions(canContinue: false))
    }

    func review(failure: SubmitFailure?, unfinished: Bool = true) -> ReviewScreen {
        let title = t("Review", "Übersicht")
        let notGiven = t("Not given", "Keine Angabe")
        return ReviewScreen(
            title: title,
            description: t("Check your answers before you send them.", "Prüfen Sie Ihre Angaben vor dem Absenden."),
            groups: [
                ReviewGroupModel(step: "service", title: t("Service", "Leistung"), editLabel: t("Edit Service", "Leistung bearbeiten"),
                                 answers: [ReviewAnswerModel(field: "service", label: t("What can we help with?", "Wobei können wir helfen?"),
                                                             display: t("A website", "Eine Website"))]),
                ReviewGroupModel(step: "when", title: t("Day and time", "Tag und Uhrzeit"), finished: !unfinished,
                                 status: unfinished ? t("Not finished", "Nicht abgeschlossen") : "",
                                 editLabel: t("Edit Day and time", "Tag und Uhrzeit bearbeiten"),
                                 answers: [ReviewAnswerModel(field: "day", label: t("Day", "Tag"), display: unfinished ? notGiven : "2025-06-12"),
                                           ReviewAnswerModel(field: "time", label: t("Time", "Uhrzeit"), display: "09:30")]),
                ReviewGroupModel(step: "contact", title: t("Contact details", "Kontaktdaten"),
                                 editLabel: t("Edit Contact details", "Kontaktdaten bearbeiten"),
                                 answers: [ReviewAnswerModel(field: "name", label: t("Name", "Name"), display: "Ada Lovelace"),
                                           ReviewAnswerModel(field: "email", label: t("E-mail", "E-Mail"), display: "ada@example.com"),
                                           ReviewAnswerModel(field: "phone", label: t("Phone", "Telefon"), display: notGiven)]),
            ],
            announcement: announcement(4, title), progress: progress(4),
            actions: StepActions(continueLabel: t("Book", "Buchen"), backLabel: t("Back", "Zurück"), canContinue: true,
                                 canGoBack: true, failure: failure))
    }

    var submitting: SubmittingScreen {
        SubmittingScreen(message: t("Sending…", "Wird gesendet …"), cancelLabel: t("Cancel", "Abbrechen"),
                         announcement: t("Sending…", "Wird gesendet …"))
    }

    var success: SuccessScreen {
        SuccessScreen(
            title: t("Booked", "Gebucht"),
            message: t("We look forward to talking to you. A confirmation is on its way to ada@example.com.",
                       "Wir freuen uns auf das Gespräch. Eine Bestätigung ist unterwegs an ada@example.com."),
            receipt: [ReceiptLine(label: t("Booking number", "Buchungsnummer"), value: "CNS-2025-0612-0930"),
                      ReceiptLine(label: t("When", "Wann"), value: t("Thursday, 12 June 2025, 09:30", "Donnerstag, 12. Juni 2025, 09:30"))],
            closeLabel: t("Close", "Schließen"), announcement: t("Booked", "Gebucht"))
    }
}
