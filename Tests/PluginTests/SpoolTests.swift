import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

@Suite("flowd.spool")
struct SpoolTests {
    func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test("writes <id>.json with the documented shape, mode 0600, secure answers left out")
    func writes() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let spool = temp.appending("spool")
        let submission = Samples.submission(
            answers: ["name": .text("Ada"), "topics": .list(["a", "b"]), "count": .integer(3), "ok": .bool(true)],
            secure: ["password": "hunter2-secret"])
        let result = await caller.submit(
            "flowd.spool", submission: submission, context: Samples.context(options: ["directory": .string(spool)]),
            timeout: .seconds(30))
        #expect(result == .success(SubmitReceipt(["reference": .string(submission.id)])))
        let file = spool + "/\(submission.id).json"
        let object = try json(file)
        #expect(object["id"] as? String == submission.id)
        #expect(object["flow"] as? String == "sample")
        #expect(object["session"] as? String == submission.sessionID)
        #expect(object["owner"] as? Int == Int(submission.ownerUID))
        #expect(object["locale"] as? String == "en")
        #expect(object["submittedAt"] as? String == "2024-05-29T16:26:40Z")
        let answers = try #require(object["answers"] as? [String: Any])
        #expect(answers["name"] as? String == "Ada")
        #expect(answers["topics"] as? [String] == ["a", "b"])
        #expect(answers["count"] as? Int == 3)
        #expect(answers["ok"] as? Bool == true)
        #expect(answers["password"] == nil)
        let raw = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!raw.contains("hunter2-secret"))
        #expect(mode(file) == 0o600)
        #expect(mode(spool) == 0o700)
    }

    @Test("includeSecure puts secure answers into the file")
    func includeSecure() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let spool = temp.appending("spool")
        let submission = Samples.submission(secure: ["password": "hunter2"])
        _ = await caller.submit(
            "flowd.spool", submission: submission,
            context: Samples.context(options: ["directory": .string(spool), "includeSecure": true]),
            timeout: .seconds(30))
        let answers = try #require(try json(spool + "/\(submission.id).json")["answers"] as? [String: Any])
        #expect(answers["password"] as? String == "hunter2")
    }

    @Test("without a directory option it spools to <stateDirectory>/spool/<flow>")
    func defaultDirectory() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let state = try temp.makeDirectory("state")
        let submission = Samples.submission(flow: "consultation")
        let result = await caller.submit(
            "flowd.spool", submission: submission,
            context: Samples.context(flow: "consultation", stateDirectory: state), timeout: .seconds(30))
        #expect(result.value != nil)
        #expect(FileManager.default.fileExists(atPath: state + "/spool/consultation/\(submission.id).json"))
        #expect(mode(state + "/spool") == 0o700)
    }

    @Test("a retry with the same submission id replaces the file; no temporary files stay")
    func idempotent() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let spool = temp.appending("spool")
        let context = Samples.context(options: ["directory": .string(spool)])
        _ = await caller.submit(
            "flowd.spool", submission: Samples.submission(answers: ["name": .text("first")]), context: context,
            timeout: .seconds(30))
        _ = await caller.submit(
            "flowd.spool", submission: Samples.submission(answers: ["name": .text("second")]), context: context,
            timeout: .seconds(30))
        let names = try FileManager.default.contentsOfDirectory(atPath: spool)
        #expect(names == ["\(Samples.submission().id).json"])
        let answers = try #require(try json(spool + "/" + names[0])["answers"] as? [String: Any])
        #expect(answers["name"] as? String == "second")
    }

    @Test("bad options and unusable places fail with a detail for the journal, no message for the person")
    func failures() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let file = temp.appending("a-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let cases: [([String: JSONValue], String)] = [
            (["directory": "relative/spool"], "absolute path"),
            (["directory": 42], "must be a string"),
            (["directory": .string(file + "/below")], "flowd.spool: mkdir"),
            (["directroy": "/tmp"], "unknown option \"directroy\""),
            (["includeSecure": "yes"], "true or false"),
        ]
        for (options, detail) in cases {
            let result = await caller.submit(
                "flowd.spool", submission: Samples.submission(), context: Samples.context(options: options),
                timeout: .seconds(30))
            #expect(result.failureMessage == .some(nil), "\(options)")
            #expect(result.failureDetail?.contains(detail) == true, "\(options): \(result.failureDetail ?? "")")
        }
        // A submission id that is not a plain file name never becomes a path.
        let sneaky = await caller.submit(
            "flowd.spool", submission: Samples.submission(id: "../escape"),
            context: Samples.context(options: ["directory": .string(temp.appending("spool"))]), timeout: .seconds(30))
        #expect(sneaky.failureMessage == .some(nil))
        #expect(!FileManager.default.fileExists(atPath: temp.appending("escape.json")))
    }
}
