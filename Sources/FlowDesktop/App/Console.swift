import FlowdSystem

/// Lines on standard output and standard error, each written at once (not
/// held in a buffer when the output is a file or a pipe: the desktop suite
/// reads the fixture driver's lines as they come).
enum Console {
    static func line(_ text: String) { try? FileDescriptor.writeAll(1, Array((text + "\n").utf8)) }
    static func error(_ text: String) { FileDescriptor.printError(text) }
}
