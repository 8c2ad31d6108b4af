// What every fuzz target shares: reading structured choices out of the
// fuzzer's bytes, an invariant check that stops the run, and the replay
// entry point of a build without libFuzzer.
//
// A target is an executable with `@_cdecl("LLVMFuzzerTestOneInput")`. Built
// for fuzzing (Fuzz/run.sh: --sanitize fuzzer, -DFUZZING) it has no `main` of
// its own and libFuzzer's drives it; built as usual (swift build) its `main`
// is ``FuzzReplay/main(_:)``, which runs each file it is given through the
// same function: the corpus and any crash input replay without the fuzzer.
import FlowdSystem

/// Reads choices out of a fuzz input, front to back; past the end every read
/// gives zero, so any input is a complete script.
package struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        self.init(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    }

    /// True once every byte was read.
    package var isAtEnd: Bool { position >= bytes.count }

    /// The next byte.
    package mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A number below `bound` (0 when `bound` is 0).
    package mutating func below(_ bound: Int) -> Int {
        guard bound > 0 else { return 0 }
        let raw = Int(byte()) << 8 | Int(byte())
        return raw % bound
    }

    /// One of `items`.
    package mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[below(items.count)]
    }

    /// An Int64 from eight bytes.
    package mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return Int64(bitPattern: value)
    }

    /// A string of up to `limit` bytes, length first (not always valid UTF-8:
    /// decoding repairs it, as a D-Bus string is repaired nowhere but the
    /// engine must still cope with whatever text arrives).
    package mutating func string(limit: Int = 64) -> String {
        let count = below(limit + 1)
        var raw: [UInt8] = []
        for _ in 0..<count where !isAtEnd { raw.append(byte()) }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Everything not read yet.
    package mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return position < bytes.count ? Array(bytes[position...]) : []
    }
}

/// Stops the run when an invariant does not hold: libFuzzer saves the input
/// as a crash, and the replay reports it.
package func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// The `main` of a target built without libFuzzer.
package enum FuzzReplay {
    /// Runs each file named on the command line (a directory: each file in
    /// it) through `entry`; options in libFuzzer's `-name=value` form are
    /// ignored. Exit 0 when all ran (a failing input aborts).
    package static func main(_ entry: (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() where !argument.hasPrefix("-") {
            let files = (try? FileSystem.status(argument).isDirectory) == true
                ? ((try? FileSystem.directoryEntries(argument)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
                    .map { argument + "/" + $0 }
                : [argument]
            for file in files {
                let bytes: [UInt8]
                do {
                    bytes = try FileSystem.readFile(file, limit: 1 << 24)
                } catch {
                    FileDescriptor.printError("\(error)")
                    CurrentProcess.exit(66)
                }
                _ = bytes.withUnsafeBufferPointer { entry($0.baseAddress, $0.count) }
                count += 1
            }
        }
        FileDescriptor.printError("replayed \(count) inputs")
        CurrentProcess.exit(0)
    }
}
