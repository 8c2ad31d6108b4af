import Foundation
import Glibc
import Testing
import TestSupport

@testable import FlowStore

/// Every upsert that returned before the daemon was killed with SIGKILL is in
/// the database afterwards.
///
/// The writer runs in a child process (this test binary re-executed with a
/// filter and an environment variable). After each commit returns it writes
/// the iteration number to a pipe; the parent kills it with SIGKILL at a
/// random point and then checks every number it read.
@Suite("SessionStore: kill -9 durability")
struct KillNineTests {
    static let databaseVariable = "FLOWSTORE_KILL9_DATABASE"

    static var isChild: Bool { ProcessInfo.processInfo.environment[databaseVariable] != nil }

    /// The child's side. Skipped in a normal test run.
    @Test(.enabled(if: KillNineTests.isChild, "runs only as the child of everyAcknowledgedUpsertSurvivesSIGKILL"))
    func writerChild() throws {
        let path = try #require(ProcessInfo.processInfo.environment[Self.databaseVariable])
        let store = try SessionStore(path: path)
        let parent = getppid()
        for n in 1...2_000_000 {
            // One new row (the insert path) and one row rewritten every time
            // (the update path), both acknowledged only after they commit.
            let payload = Array("\(n)".utf8) + Array(repeating: UInt8(n % 251), count: 1000)
            try store.upsert(makeSession("row-\(n)", updated: Int64(n), payload: payload))
            try store.upsert(makeSession("counter", updated: Int64(n), payload: Array("\(n)".utf8)))
            writeToParent("\(n)")
            if getppid() != parent { return }  // the parent is gone: stop
        }
    }

    @Test(arguments: [1, 2, 3])
    func everyAcknowledgedUpsertSurvivesSIGKILL(round: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("sessions.sqlite")
        let (child, output) = try spawnTestChild(
            filter: "FlowStoreTests.KillNineTests/writerChild", environment: [Self.databaseVariable: path])

        // Let it run for a random number of acknowledged commits, then kill it.
        let target = Int.random(in: 50...1500)
        let deadline = ContinuousClock.now + .seconds(120)
        var lines = readLines(from: output.rawValue, until: deadline) { $0.count < target }
        child.send(.kill)
        let status = child.wait(timeout: .seconds(30))
        // Anything acknowledged between the last read and the kill.
        lines += readLines(from: output.rawValue, until: .now + .seconds(30)) { _ in true }

        try #require(lines.count >= target, "the child acknowledged only \(lines.count) commits (\(String(describing: status)))")
        #expect(status == .signaled(.kill), "the child must have died of SIGKILL mid-run, not exited (\(String(describing: status)))")
        let acknowledged = lines.compactMap { Int($0) }
        let outOfOrder = zip(1..., acknowledged).first { $0.0 != $0.1 }
        #expect(acknowledged.count == lines.count && outOfOrder == nil, "acknowledgements arrive in order, whole")

        print("kill -9 round \(round): \(acknowledged.count) acknowledged, \(String(describing: status))")
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        var missing: [Int] = []
        for n in acknowledged {
            guard let row = try store.load(id: "row-\(n)"), row.payload.starts(with: Array("\(n)".utf8)) else {
                missing.append(n)
                continue
            }
        }
        #expect(missing.isEmpty, "acknowledged but lost after SIGKILL: \(missing.prefix(20))")
        let counter = try #require(try store.load(id: "counter"))
        let last = try #require(Int(String(decoding: counter.payload, as: UTF8.self)))
        #expect(last >= acknowledged.count)
        // At most the one iteration in flight can have committed without being acknowledged.
        #expect(try store.count() - 1 <= acknowledged.count + 1)
    }
}
