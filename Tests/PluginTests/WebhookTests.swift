import FlowKit
import FlowdSystem
import Foundation
import PluginHost
import PluginTestSupport
import Testing

@Suite("flowd.webhook")
struct WebhookTests {
    func submit(
        _ caller: PluginCaller, _ options: [String: JSONValue], locale: String = "en",
        submission: Submission = Samples.submission()
    ) async -> PluginCallResult<SubmitReceipt> {
        await caller.submit(
            "flowd.webhook", submission: submission, context: Samples.context(locale: locale, options: options),
            timeout: .seconds(60))
    }

    @Test("POSTs the submission as JSON; a 2xx JSON object becomes the receipt")
    func posts() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .respond(status: 201, body: #"{"reference": "R-9"}"#))
        let submission = Samples.submission(answers: ["name": .text("Ada")], secure: ["password": "s3cret"])
        let result = await submit(
            caller, ["url": .string(server.url("/hooks/flow?x=1")), "headers": ["Authorization": "Bearer abc"]],
            submission: submission)
        #expect(result == .success(SubmitReceipt(["reference": "R-9"])))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/hooks/flow?x=1")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["authorization"] == "Bearer abc")
        #expect(request.headers["idempotency-key"] == submission.idempotencyKey)
        // The product's one version, not Foundation's "unknown version".
        #expect(request.headers["user-agent"] == "flowd-webhook/\(FlowdVersion.current)")
        let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        #expect(body["id"] as? String == submission.id)
        #expect((body["answers"] as? [String: Any])?["name"] as? String == "Ada")
        #expect((body["answers"] as? [String: Any])?["password"] == nil)
        #expect(!String(decoding: request.body, as: UTF8.self).contains("s3cret"))

        // The administrator's own User-Agent replaces the plugin's.
        _ = await submit(caller, ["url": .string(server.url("/hooks")), "headers": ["User-Agent": "acme-forms/2"]])
        #expect(server.requests.last?.headers["user-agent"] == "acme-forms/2")
    }

    @Test("includeSecure sends secure answers; a 2xx without JSON gives an empty receipt")
    func includeSecure() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .respond(status: 204, body: ""))
        let result = await submit(
            caller, ["url": .string(server.url()), "includeSecure": true],
            submission: Samples.submission(secure: ["password": "s3cret"]))
        #expect(result == .success(SubmitReceipt()))
        let body = try #require(server.requests.first?.body)
        #expect(String(decoding: body, as: UTF8.self).contains("s3cret"))
    }

    @Test("HTTP errors become messages for the person", arguments: [
        (400, "The server refused the data."), (422, "The server refused the data."),
        (401, "The server refused access. Please tell your administrator."),
        (404, "The server address is wrong. Please tell your administrator."),
        (413, "This is too large for the server."),
        (429, "The server is busy. Please try again later."),
        (500, "The server had a problem. Please try again later."),
        (503, "The server is busy. Please try again later."),
        (504, "The server took too long to answer. Please try again later."),
    ])
    func httpErrors(status: Int, message: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .respond(status: status, body: #"{"error": "internal"}"#))
        let result = await submit(caller, ["url": .string(server.url() + "?token=s3cret")])
        #expect(result.failureMessage == .some(message))
        // The log's detail: English, the address without its query, the status.
        let detail = try #require(result.failureDetail)
        #expect(detail == "flowd.webhook: POST \(server.url()) answered HTTP \(status)", "\(detail)")
        #expect(!detail.contains("s3cret"))
    }

    @Test("messages follow the session's language")
    func localized() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .respond(status: 500, body: ""))
        for (locale, text) in [
            ("de", "Der Server hatte ein Problem."), ("fr", "Le serveur a rencontré un problème."),
            ("es", "El servidor tuvo un problema."), ("pt-BR", "The server had a problem."),
        ] {
            let result = await submit(caller, ["url": .string(server.url())], locale: locale)
            #expect((result.failureMessage ?? nil)?.hasPrefix(text) == true, "\(locale)")
        }
    }

    @Test("a server that does not answer in time gives the timeout message")
    func timeout() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .hang)
        let result = await submit(caller, ["url": .string(server.url()), "timeoutSeconds": 1])
        #expect(result.failureMessage == .some("The server took too long to answer. Please try again later."))
        server.stop()
    }

    @Test("a server that is not there gives the unreachable message")
    func unreachable() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .hang)
        let url = server.url()
        server.stop()
        let result = await submit(caller, ["url": .string(url)])
        #expect(result.failureMessage == .some("Couldn’t reach the server. Please try again later."))
        let detail = try #require(result.failureDetail)
        #expect(detail.hasPrefix("flowd.webhook: POST \(url): cannot reach the server (URLError "), "\(detail)")
    }

    @Test("the person reads why in their language: German, French and Japanese sessions")
    func unreachableLocalized() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .hang)
        let url = server.url()
        server.stop()
        let expected = [
            "de": "Der Server ist nicht erreichbar. Bitte versuchen Sie es später noch einmal.",
            "fr": "Impossible de joindre le serveur. Veuillez réessayer plus tard.",
            "ja": "サーバーに接続できませんでした。しばらくしてからもう一度お試しください。",
        ]
        for (locale, message) in expected {
            let result = await submit(caller, ["url": .string(url)], locale: locale)
            #expect(result.failureMessage == .some(message), "\(locale)")
        }
    }

    @Test("cancelling the submit ends the request")
    func cancel() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let server = try LoopbackHTTPServer(reply: .hang)
        let task = Task { await submit(caller, ["url": .string(server.url())]) }
        #expect(await waitUntil { !server.requests.isEmpty })
        task.cancel()
        #expect(await task.value == .cancelled)
        server.stop()
    }

    @Test("bad options are refused")
    func badOptions() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let cases: [([String: JSONValue], String)] = [
            ([:], "\"url\" is required"),
            (["url": "ftp://example.org/x"], "\"url\" must be"),
            (["url": "not a url"], "\"url\" must be"),
            (["url": "http://127.0.0.1:9/", "headers": ["Content-Type": "text/plain"]], "set by the plugin"),
            (["url": "http://127.0.0.1:9/", "headers": ["X-N": 1]], "\"headers\" must be an object of strings"),
            (["url": "http://127.0.0.1:9/", "timeoutSeconds": 1000], "timeoutSeconds"),
            (["url": "http://127.0.0.1:9/", "timeoutSeconds": 0.5], "timeoutSeconds"),
            (["url": "http://127.0.0.1:9/", "method": "PUT"], "unknown option \"method\""),
        ]
        for (options, detail) in cases {
            let result = await submit(caller, options)
            #expect(result.failureMessage == .some(nil), "\(options)")
            #expect(result.failureDetail?.contains(detail) == true, "\(options): \(result.failureDetail ?? "")")
        }
    }
}
