import FlowEngine

/// flowctl's own words: only what flowd does not say. Everything about a
/// flow (titles, labels, errors of fields, "Continue", "Back", "Not given",
/// "Try again", "Sending…") comes from the daemon in the session's language,
/// and "Step N of M" and yes/no from flowd's built-in catalog
/// (`Strings.builtin`). Here: the wizard's prompts and hints, the captions
/// of `show`, the tables' headings, relative times, and the sentences for
/// flowd's errors, which the D-Bus API sends in English for programs and logs.
///
/// The texts live in `Resources/l10n/<locale>.json`, one file per locale,
/// in the same ten locales as flowd's catalog, and are looked up with its
/// fallback rules (`pt-PT` → `pt-BR`, `zh-TW` → `zh-Hant`, `sv` → `en`).
package enum FlowctlText: String, CaseIterable, Sendable {
    // MARK: the wizard

    /// How to answer, go back and quit.
    case intro
    /// "{id}" and "{command}": printed on Ctrl-C and on quit.
    case saved
    /// The name of the Enter key in the action lines ("Enter: Continue").
    case keyEnter
    /// "{label}" and "{value}": a key and its action ("Enter: Continue"),
    /// a field and its answer ("Name: Ada"), as the language punctuates
    /// them (French "Entrée : Continuer").
    case labelValue
    /// The quit action.
    case quit
    /// The action that asks the step's questions again.
    case change
    /// The review action that opens a step ("1–3: Edit a step").
    case editStep
    /// A number field got something else.
    case enterNumber
    /// "{yes}" and "{no}": a toggle got something else.
    case answerYesNo
    /// "{max}": a choice got something else.
    case chooseOption
    /// "{max}": a multiple choice got something else.
    case chooseOptions
    /// `:back` on the first step.
    case firstStep
    /// Resuming while a submit runs.
    case waiting
    /// Standard input ended.
    case inputEnded
    /// "{value}": the answer flowd holds for a field and has just refused.
    case refusedAnswer
    /// Under an optional field with no answer: Enter skips it.
    case optionalHint
    /// Under an optional field with an answer: Enter keeps it, `:clear` removes it.
    case optionalKeepHint
    /// "{text}": a field's placeholder, an example of an answer.
    case example
    /// Ctrl-C while a submit runs.
    case submitStillRunning
    /// The choice after Ctrl-C while a submit runs: wait on.
    case keepWaiting
    /// The choice after Ctrl-C while a submit runs: leave, the submit goes on.
    case leaveRunning
    /// "{id}" and "{command}": leaving while a submit runs.
    case submitGoesOn
    /// "{step}": a submit found a step that is not finished, and went there.
    case notFinished
    /// "{step}" and "{command}": `flowctl submit` found a step that is not finished.
    case notFinishedShow
    /// "{reference}": the receipt's reference once submitted.
    case reference
    /// "{flow}", "{id}" and "{step}": how a flow without Review is submitted.
    case noReviewHint
    /// "{requested}" and "{shown}": the flow lacks the person's language.
    case languageMissing

    // MARK: rule hints (the wizard and `show`)

    /// Between two rule hints (", ").
    case ruleSeparator
    /// "{min}" and "{max}": a text's length range.
    case lengthRange
    /// "{min}": a text's least length.
    case lengthMin
    /// "{max}": a text's greatest length.
    case lengthMax
    /// A number must be whole.
    case wholeNumber
    /// "{min}": the fewest options to pick.
    case pickAtLeast
    /// "{max}": the most options to pick.
    case pickAtMost
    /// "{date}": the exclusive lower bound of a date.
    case afterDate
    /// "{date}": the exclusive upper bound of a date.
    case beforeDate
    /// A toggle must be on.
    case mustBeYes
    /// How a date is typed, as flowd's date validators say it ("JJJJ-MM-TT"); always ISO 8601.
    case formatDate
    /// How a time of day is typed ("HH:MM").
    case formatTime

    // MARK: `set`: a value refused before anything is sent (quoted values)

    /// "{value}" and "{field}": a toggle got something else.
    case typeNotYesNo
    /// "{value}" and "{field}": a number field got something else.
    case typeNotNumber
    /// "{value}", "{field}" and "{options}" (the option ids).
    case typeNotOption
    /// "{field}": a computed field.
    case typeComputed
    /// "{step}": a step without fields.
    case typeNoFields
    /// "{key}", "{step}" and "{fields}": no such field on the step.
    case typeNotField

    // MARK: `show` and the tables

    /// The captions of one field in `show`.
    case captionField, captionValue, captionOptions, captionHint, captionHelp, captionRules, captionError, captionWarning
    /// A field without an answer, and a secure field that holds one.
    case notSet, secureSet
    /// The column headings of `flows` and `sessions`.
    case columnID, columnFlow, columnSteps, columnReview, columnLocales, columnTitle, columnState, columnStep, columnChanged, columnOwner
    /// Session states as `sessions` shows them.
    case stateEditing, stateReview, stateSubmitting, stateSubmitted, stateFailed
    /// When a session last changed: "just now", "1 minute ago", "{n} minutes ago", hours, days.
    case changedJustNow, changedMinuteOne, changedMinutesOther, changedHourOne, changedHoursOther
    case changedDayOne, changedDaysOther
    /// `flowctl sessions` with none.
    case noSessions
    /// `flowctl flows` when flowd serves none.
    case noFlows

    // MARK: flowd's errors, by D-Bus error name

    /// "{flow}" and "{flows}".
    case errorNoFlow
    /// "{id}".
    case errorNoSession
    case errorNotFound, errorNotFinished, errorInvalidArgs, errorAccessDenied, errorInvalidState, errorLimitExceeded
    case errorPluginFailed, errorTimeout, errorCancelled, errorFailed
    /// "{sentence}" and "{detail}": flowctl's sentence with flowd's own
    /// (English) detail, where it names what was refused.
    case errorDetail
    /// "{bus}" and "{command}".
    case errorNotRunning
    /// "{bus}" and "{detail}".
    case errorCannotConnect, errorDisconnected
    case errorNoReply
    /// polkit wants a password and the call did not allow asking for it
    /// (`InteractiveAuthorizationRequired`).
    case errorAuthenticationRequired
    /// The same, although the call let polkit ask: no authentication agent
    /// could (flowctl's needs a controlling terminal).
    case errorNoAuthenticationAgent
    // MARK: `reload`

    /// The first line after a reload.
    case reloadDone
    /// "{count}" and "{flows}": the flows served after it.
    case reloadServed
    /// "{flows}": flows served now that were not before, and the other way round.
    case reloadAdded, reloadGone
    /// "{count}": the heading of the flow files refused, one per line below.
    case reloadRefused
    /// "{detail}": flowd's reason a reload did not happen (a configuration
    /// error, or polkit's refusal).
    case reloadFailed

    /// The buses, for the messages above: "{address}" for the last.
    case busSession, busSystem, busAddress

    // MARK: language names, for ``languageMissing``

    case languageEN = "language-en", languageES = "language-es", languageFR = "language-fr"
    case languageDE = "language-de", languageIT = "language-it", languagePTBR = "language-pt-BR"
    case languageJA = "language-ja", languageKO = "language-ko"
    case languageZHHans = "language-zh-Hans", languageZHHant = "language-zh-Hant"

    /// Every translation, from the embedded resource files.
    package static let catalog = Strings(resources: [
        ("en", PackageResources.en_json), ("es", PackageResources.es_json), ("fr", PackageResources.fr_json),
        ("de", PackageResources.de_json), ("it", PackageResources.it_json), ("pt-BR", PackageResources.pt_BR_json),
        ("ja", PackageResources.ja_json), ("ko", PackageResources.ko_json),
        ("zh-Hans", PackageResources.zh_Hans_json), ("zh-Hant", PackageResources.zh_Hant_json),
    ])

    /// The text in `locale` (with the catalog's fallback), placeholders filled.
    package func text(_ locale: String, _ arguments: [String: String] = [:]) -> String {
        Self.catalog.text(forKey: rawValue, locale: locale, arguments)
    }

    /// The name of the language `tag` in `locale`: one of flowd's ten
    /// catalog languages by its name, any other by its tag.
    package static func languageName(_ tag: String, in locale: String) -> String {
        guard let index = LocaleFallback.bestMatch(for: tag, in: Strings.locales) else { return tag }
        let catalogTag = Strings.locales[index]
        // Only a tag of the same language names it (`pt-PT` is not "Brazilian Portuguese").
        guard LocaleFallback.normalize(tag).lowercased() == catalogTag.lowercased()
            || LocaleFallback.normalize(tag).split(separator: "-").first == catalogTag.split(separator: "-").first,
            let key = FlowctlText(rawValue: "language-" + catalogTag)
        else { return tag }
        return key.text(locale)
    }
}
