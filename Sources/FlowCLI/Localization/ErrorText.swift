import FlowClient
import FlowProtocol

/// What a person is told about a call to flowd that failed, in their language.
///
/// flowd's D-Bus error messages are English by contract, for programs and
/// logs (docs/dbus-api.md); a person reads flowctl's sentence for the error's
/// name instead. Where flowd gives a localized text for the same failure
/// (`LastError`, a field's or the page's `error`), the callers show that.
enum ErrorText {
    /// The sentence for `error` in `locale`.
    static func sentence(for error: FlowClientError, locale: String) -> String {
        guard case .flowd(let name) = error.kind else { return error.message }
        let key: FlowctlText
        switch name {
        case .notFound: key = .errorNotFound
        case .invalidArgs: key = .errorInvalidArgs
        case .accessDenied: key = .errorAccessDenied
        case .invalidState: key = .errorInvalidState
        case .validationFailed: key = .errorNotFinished
        case .limitExceeded: key = .errorLimitExceeded
        case .submitFailed: return error.message
        case .pluginFailed: key = .errorPluginFailed
        case .timeout: key = .errorTimeout
        case .cancelled: key = .errorCancelled
        case .failed: key = .errorFailed
        }
        return key.text(locale)
    }
}

extension CLIError {
    /// flowctl's exit status and message, in `locale`, for a failed call to
    /// flowd on `bus`; `flowd` is the daemon's path for the "Start it with"
    /// hint. `asksPassword`: the call let polkit ask for a password, so
    /// "authentication is required" means no agent could ask.
    package init(
        _ error: FlowClientError, bus: BusChoice, locale: String, asksPassword: Bool = false,
        flowd: @autoclosure () -> String = FlowdLocation.current()
    ) {
        let detail = error.underlying?.message ?? error.message
        let busName = bus.displayName(in: locale)
        switch error.kind {
        case .flowd(let name):
            var message = ErrorText.sentence(for: error, locale: locale)
            switch name {
            case .notFound, .invalidArgs, .accessDenied, .limitExceeded, .pluginFailed, .failed:
                // What was refused, in flowd's words: the field, the limit, the plugin.
                if !error.message.isEmpty {
                    message = FlowctlText.errorDetail.text(locale, ["sentence": message, "detail": error.message])
                }
            case .invalidState, .validationFailed, .submitFailed, .timeout, .cancelled:
                break
            }
            switch name {
            case .notFound: self.init(.notFound, message)
            case .invalidArgs: self.init(.dataError, message)
            case .accessDenied: self.init(.accessDenied, message)
            case .pluginFailed: self.init(.unavailable, message)
            case .invalidState, .validationFailed, .limitExceeded, .submitFailed, .timeout, .cancelled, .failed:
                self.init(.failure, message)
            }
        case .notRunning:
            var message = FlowctlText.errorNotRunning.text(locale, ["bus": busName, "command": bus.startCommand(flowd: flowd())])
            if let name = error.name, name != .serviceUnknown, name != .nameHasNoOwner {
                message += " (activation failed: \(detail))"
            }
            self.init(.unavailable, message)
        case .cannotConnect:
            var message = FlowctlText.errorCannotConnect.text(locale, ["bus": busName, "detail": detail])
            if case .user = bus { message += " (is this a desktop or user session? For the system service use --system)" }
            self.init(.unavailable, message)
        case .disconnected:
            self.init(.unavailable, FlowctlText.errorDisconnected.text(locale, ["bus": busName, "detail": detail]))
        case .noReply:
            self.init(.unavailable, FlowctlText.errorNoReply.text(locale))
        case .cancelled:
            self.init(.failure, error.message)
        case .protocolMismatch:
            self.init(.software, error.message)
        case .dbus:
            switch error.name {
            case .accessDenied?: self.init(.accessDenied, FlowctlText.errorAccessDenied.text(locale))
            case .interactiveAuthorizationRequired?:
                // flowd's message says what was refused, under which action.
                let sentence: FlowctlText = asksPassword ? .errorNoAuthenticationAgent : .errorAuthenticationRequired
                self.init(.accessDenied, FlowctlText.errorDetail.text(
                    locale, ["sentence": sentence.text(locale), "detail": error.message]))
            case .invalidArgs?: self.init(.dataError, FlowctlText.errorInvalidArgs.text(locale))
            case .unknownObject?: self.init(.notFound, FlowctlText.errorNotFound.text(locale))
            default: self.init(.failure, error.message)
            }
        }
    }
}

extension BusChoice {
    /// "the session bus", "the system bus", "the bus at ADDR", in `locale`,
    /// for flowctl's sentences; ``displayName`` is the English one the
    /// shared client code (and flowd-gtk's standard error) uses.
    package func displayName(in locale: String) -> String {
        switch self {
        case .system: return FlowctlText.busSystem.text(locale)
        case .user: return FlowctlText.busSession.text(locale)
        case .address(let address): return FlowctlText.busAddress.text(locale, ["address": address])
        }
    }
}
