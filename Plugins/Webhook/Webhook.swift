// flowd.webhook: POSTs the submission as JSON to a configured URL.
import FlowKit
import FlowdPluginSupport
import FlowdSystem
import Foundation
import FoundationNetworking

/// `flowd.webhook`.
///
/// Options:
/// - `url` (required): an `https://` URL (`http://` is accepted for loopback
///   and trusted networks; the answers travel in clear text then).
/// - `timeoutSeconds` (1–300, default 30): for the whole exchange. Whole
///   seconds: FoundationNetworking hands curl whole seconds, and a value
///   under one second made it give up at once (seen here), so a fraction is
///   rounded up.
/// - `headers` (object of strings): extra request headers, for example an
///   `Authorization` token. `Content-Type`, `Content-Length` and `Host` are
///   set by the plugin and cannot be overridden.
/// - `includeSecure` (bool, default false): put secure answers in the body.
///
/// The request carries `Content-Type: application/json`, `Accept:
/// application/json`, `Idempotency-Key: <the submission's idempotency key>`,
/// which stays the same when the person retries the same answers, so a server
/// can drop duplicates, and
/// `User-Agent: flowd-webhook/<flowd version>` unless `headers` gives one.
///
/// A 2xx answer is success; a JSON object in its body becomes the receipt
/// (its `message`, if any, is shown to the person; keep secrets out).
/// Anything else fails with a message for the person, in the session's
/// language (en, de, fr, es): see ``WebhookMessages``; and flowd's log gets
/// the cause in English: the URL without its query, the HTTP status or the
/// system's error.
struct WebhookAction: SubmitAction, DeclaresOptions {
    static let name = "flowd.webhook"
    static let declaredOptions = [
        PluginOption(name: "url", type: .string, required: true),
        PluginOption(name: "timeoutSeconds", type: .number),
        PluginOption(name: "headers", type: .stringMap),
        PluginOption(name: "includeSecure", type: .bool),
    ]
    static let maximumReceiptBytes = 64 * 1024
    static let reservedHeaders: Set<String> = ["content-type", "content-length", "host", "idempotency-key"]
    /// Who is calling, unless the administrator's `headers` say otherwise.
    static let userAgent = "flowd-webhook/\(FlowdVersion.current)"

    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        guard let text = try options.string("url"), let url = URL(string: text),
            let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil
        else {
            throw PluginConfigurationError(Self.name, "option \"url\" must be an http:// or https:// URL")
        }
        // Cut to the call's deadline, less a second for curl's rounding.
        let timeout = context.timeLimit(
            try options.number("timeoutSeconds", in: 1...300) ?? 30, margin: 1, floor: 1
        ).rounded(.up)
        let headers = try options.stringMap("headers") ?? [:]
        if let reserved = headers.keys.first(where: { Self.reservedHeaders.contains($0.lowercased()) }) {
            throw PluginConfigurationError(Self.name, "header \"\(reserved)\" is set by the plugin")
        }
        let body = try SubmissionDocument(submission, includeSecure: try options.bool("includeSecure") ?? false)
            .encoded()

        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(submission.idempotencyKey, forHTTPHeaderField: "Idempotency-Key")

        try Task.checkCancellation()
        let (data, response) = try await HTTPExchange.post(request, timeout: timeout, locale: context.locale)
        let status = response.statusCode
        guard (200..<300).contains(status) else {
            throw ExplainedFailure(
                WebhookMessages.forStatus(status)(context.locale),
                detail: "\(Self.name): POST \(WebhookMessages.loggable(url)) answered HTTP \(status)")
        }
        guard !data.isEmpty, data.count <= Self.maximumReceiptBytes,
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        else { return SubmitReceipt() }
        return SubmitReceipt(object)
    }
}

/// One HTTP exchange on an ephemeral `URLSession`, cancellable.
enum HTTPExchange {
    static func post(_ request: URLRequest, timeout: Double, locale: String) async throws -> (Data, HTTPURLResponse) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        let holder = TaskHolder()
        let result: Result<(Data, URLResponse), any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(returning: .failure(error))
                    } else if let response {
                        continuation.resume(returning: .success((data ?? Data(), response)))
                    } else {
                        continuation.resume(returning: .failure(URLError(.badServerResponse)))
                    }
                }
                holder.set(task)
                task.resume()
            }
        } onCancel: {
            holder.cancel()
        }
        switch result {
        case .success(let (data, response)):
            guard let http = response as? HTTPURLResponse else {
                throw WebhookError("the answer was not HTTP")
            }
            return (data, http)
        case .failure(let error):
            if Task.isCancelled { throw CancellationError() }
            let target = request.url.map(WebhookMessages.loggable) ?? "?"
            throw WebhookMessages.failure(
                for: error, locale: locale, target: "\(WebhookAction.name): POST \(target)", timeout: timeout)
        }
    }

    /// The data task, so cancellation can reach it from another thread.
    private final class TaskHolder: Sendable {
        private struct State: @unchecked Sendable {
            // @unchecked: a URLSessionDataTask may be cancelled from any thread.
            var task: URLSessionDataTask?
            var cancelled = false
        }
        private let state = LockedValue(State())

        func set(_ task: URLSessionDataTask) {
            let cancelNow = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            if cancelNow { task.cancel() }
        }

        func cancel() {
            let task = state.withLock { state in
                state.cancelled = true
                return state.task
            }
            task?.cancel()
        }
    }
}

/// A failure the person sees only as the daemon's generic message.
struct WebhookError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = "\(WebhookAction.name): \(description)" }
}

/// What the person reads when the webhook fails.
enum WebhookMessages {
    static let refused = LocalizedMessage([
        "en": "The server refused the data.",
        "de": "Der Server hat die Daten abgelehnt.",
        "fr": "Le serveur a refusé les données.",
        "es": "El servidor rechazó los datos.",
        "ja": "サーバーがデータを受け付けませんでした。",
    ])
    static let accessDenied = LocalizedMessage([
        "en": "The server refused access. Please tell your administrator.",
        "de": "Der Server hat den Zugriff verweigert. Bitte informieren Sie Ihre Administration.",
        "fr": "Le serveur a refusé l’accès. Veuillez prévenir votre administrateur.",
        "es": "El servidor denegó el acceso. Avise a su administrador.",
        "ja": "サーバーにアクセスを拒否されました。管理者に連絡してください。",
    ])
    static let wrongAddress = LocalizedMessage([
        "en": "The server address is wrong. Please tell your administrator.",
        "de": "Die Serveradresse ist falsch. Bitte informieren Sie Ihre Administration.",
        "fr": "L’adresse du serveur est erronée. Veuillez prévenir votre administrateur.",
        "es": "La dirección del servidor es incorrecta. Avise a su administrador.",
        "ja": "サーバーのアドレスが正しくありません。管理者に連絡してください。",
    ])
    static let tooLarge = LocalizedMessage([
        "en": "This is too large for the server.",
        "de": "Das ist zu groß für den Server.",
        "fr": "C’est trop volumineux pour le serveur.",
        "es": "Esto es demasiado grande para el servidor.",
        "ja": "サーバーで扱えない大きさです。",
    ])
    static let busy = LocalizedMessage([
        "en": "The server is busy. Please try again later.",
        "de": "Der Server ist ausgelastet. Bitte versuchen Sie es später noch einmal.",
        "fr": "Le serveur est occupé. Veuillez réessayer plus tard.",
        "es": "El servidor está ocupado. Inténtelo de nuevo más tarde.",
        "ja": "サーバーが混み合っています。しばらくしてからもう一度お試しください。",
    ])
    static let serverProblem = LocalizedMessage([
        "en": "The server had a problem. Please try again later.",
        "de": "Der Server hatte ein Problem. Bitte versuchen Sie es später noch einmal.",
        "fr": "Le serveur a rencontré un problème. Veuillez réessayer plus tard.",
        "es": "El servidor tuvo un problema. Inténtelo de nuevo más tarde.",
        "ja": "サーバーで問題が発生しました。しばらくしてからもう一度お試しください。",
    ])
    static let timedOut = LocalizedMessage([
        "en": "The server took too long to answer. Please try again later.",
        "de": "Der Server hat zu lange nicht geantwortet. Bitte versuchen Sie es später noch einmal.",
        "fr": "Le serveur a mis trop de temps à répondre. Veuillez réessayer plus tard.",
        "es": "El servidor tardó demasiado en responder. Inténtelo de nuevo más tarde.",
        "ja": "サーバーの応答に時間がかかりすぎています。しばらくしてからもう一度お試しください。",
    ])
    static let unreachable = LocalizedMessage([
        "en": "Couldn’t reach the server. Please try again later.",
        "de": "Der Server ist nicht erreichbar. Bitte versuchen Sie es später noch einmal.",
        "fr": "Impossible de joindre le serveur. Veuillez réessayer plus tard.",
        "es": "No se pudo conectar con el servidor. Inténtelo de nuevo más tarde.",
        "ja": "サーバーに接続できませんでした。しばらくしてからもう一度お試しください。",
    ])
    static let insecure = LocalizedMessage([
        "en": "Couldn’t make a secure connection to the server. Please tell your administrator.",
        "de": "Keine sichere Verbindung zum Server möglich. Bitte informieren Sie Ihre Administration.",
        "fr": "Impossible d’établir une connexion sécurisée avec le serveur. Veuillez prévenir votre administrateur.",
        "es": "No se pudo establecer una conexión segura con el servidor. Avise a su administrador.",
        "ja": "サーバーと安全に接続できませんでした。管理者に連絡してください。",
    ])
    static let unexpected = LocalizedMessage([
        "en": "The server gave an unexpected answer. Please try again later.",
        "de": "Der Server hat unerwartet geantwortet. Bitte versuchen Sie es später noch einmal.",
        "fr": "Le serveur a donné une réponse inattendue. Veuillez réessayer plus tard.",
        "es": "El servidor dio una respuesta inesperada. Inténtelo de nuevo más tarde.",
        "ja": "サーバーから予期しない応答がありました。しばらくしてからもう一度お試しください。",
    ])

    /// The message for an HTTP status other than 2xx.
    static func forStatus(_ status: Int) -> LocalizedMessage {
        switch status {
        case 401, 403: return accessDenied
        case 404, 405, 410: return wrongAddress
        case 408, 504: return timedOut
        case 413: return tooLarge
        case 429, 503: return busy
        case 400..<500: return refused
        case 500..<600: return serverProblem
        default: return unexpected
        }
    }

    /// The error for a failed exchange of `target` ("flowd.webhook: POST https://…"): an
    /// ``ExplainedFailure`` for the usual network troubles, with what the
    /// system said for the log, else a ``WebhookError`` (generic message).
    static func failure(for error: any Error, locale: String, target: String, timeout: Double) -> any Error {
        guard let urlError = error as? URLError else {
            return WebhookError("\(target): \(String(describing: error))")
        }
        let cause = "URLError \(urlError.code.rawValue): \(urlError.localizedDescription)"
        switch urlError.code {
        case .timedOut:
            return ExplainedFailure(timedOut(locale), detail: "\(target): no answer within \(Int(timeout)) s (\(cause))")
        case .cannotConnectToHost, .cannotFindHost, .networkConnectionLost, .notConnectedToInternet,
            .dnsLookupFailed, .resourceUnavailable:
            return ExplainedFailure(unreachable(locale), detail: "\(target): cannot reach the server (\(cause))")
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            return ExplainedFailure(insecure(locale), detail: "\(target): no secure connection (\(cause))")
        case .badServerResponse, .cannotParseResponse, .zeroByteResource:
            return ExplainedFailure(unexpected(locale), detail: "\(target): an answer that is not HTTP (\(cause))")
        default:
            return WebhookError("\(target): \(cause)")
        }
    }

    /// `url` as the log shows it: scheme, host, port and path; no user,
    /// password, query or fragment, which may hold tokens.
    static func loggable(_ url: URL) -> String {
        guard let scheme = url.scheme, let host = url.host else { return "the configured URL" }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "") + url.path
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "flowd.webhook", version: "1.0",
        capabilities: [.submitAction(WebhookAction.name, WebhookAction())]
    ).exportRetained()
}
