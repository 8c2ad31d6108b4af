import Glibc

/// Runs `body(i)` for `i` in `0..<count`, each on a thread of its own
/// (`pthread_create`), and returns the wall time from the first start to
/// the last end in nanoseconds. Real threads, not a pool: the point is
/// `count` connections calling at the same time on a 2-core machine.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws(BenchError) -> UInt64 {
    final class Work {
        let body: @Sendable (Int) -> Void
        let index: Int
        init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int) {
            self.body = body
            self.index = index
        }
    }
    var threads: [pthread_t] = []
    let started = Posix.monotonicNanoseconds()
    for i in 0..<count {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Work(body, i)).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let work = Unmanaged<Work>.fromOpaque(raw).takeRetainedValue()
            work.body(work.index)
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            for t in threads { pthread_join(t, nil) }
            throw .setup("pthread_create: \(String(cString: strerror(rc)))")
        }
        threads.append(thread)
    }
    for t in threads { pthread_join(t, nil) }
    return Posix.monotonicNanoseconds() - started
}
