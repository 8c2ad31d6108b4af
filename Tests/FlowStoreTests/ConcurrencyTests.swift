import Testing

@testable import FlowStore

@Suite("SessionStore: concurrent use")
struct ConcurrencyTests {
    @Test func manyTasksShareOneStore() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        let workers = 8
        let perWorker = 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    for i in 0..<perWorker {
                        let id = "w\(worker)-\(i)"
                        try store.upsert(makeSession(id, owner: UInt32(worker), payload: [UInt8(worker), UInt8(i)]))
                        let loaded = try store.load(id: id)
                        #expect(loaded?.payload == [UInt8(worker), UInt8(i)])
                        if i % 3 == 0 { try store.delete(id: id) }
                        try store.disablePlugin(path: "/w\(worker)", name: "w\(worker)", reason: "test", file: nil)
                        _ = try store.enablePlugin(path: "/w\(worker)")
                        _ = try store.count(owner: UInt32(worker))
                    }
                }
            }
            // A checkpointer running alongside, as the daemon would from another thread.
            group.addTask {
                for _ in 0..<20 {
                    _ = try store.checkpoint()
                    await Task.yield()
                }
            }
            try await group.waitForAll()
        }
        let kept = workers * (perWorker - (perWorker + 2) / 3)
        #expect(try store.count() == kept)
        #expect(try store.summaries().count == kept)
        for worker in 0..<workers {
            #expect(try store.count(owner: UInt32(worker)) == kept / workers)
        }
        try store.close()
    }

    @Test func closeWhileOthersUseTheStoreFailsCleanly() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for i in 0..<100 {
                        do throws(StoreError) {
                            try store.upsert(makeSession("w\(worker)-\(i)"))
                        } catch {
                            #expect(error == .closed)
                            return
                        }
                    }
                }
            }
            group.addTask { try? store.close() }
        }
        #expect(throws: StoreError.closed) { try store.count() }
    }
}
