/// A journal `MESSAGE_ID=`: 128 bits as 32 lowercase hex characters, the
/// same for every entry about one kind of event, so administrators can
/// filter with `journalctl MESSAGE_ID=…` and catalogs can attach help text.
///
/// flowd's ids were generated once from `/proc/sys/kernel/random/uuid` and
/// are fixed forever; a new kind of event gets a new id, never a reused one.
public struct MessageID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 lowercase hex characters.
    public let rawValue: String

    /// `text` if it is 32 lowercase hex characters, else nil.
    public init?(_ text: String) {
        guard Self.isValid(text) else { return nil }
        rawValue = text
    }

    private init(fixed: String) {
        rawValue = fixed
    }

    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    public var description: String { rawValue }

    /// A session was started (`StartSession`).
    public static let sessionStarted = MessageID(fixed: "995f4e09ab32461ebef85cbb74068c45")
    /// A step was completed (`Continue` moved on).
    public static let stepCompleted = MessageID(fixed: "5bf3bf7dec6f4958ae531c92e149be6c")
    /// A session was submitted successfully.
    public static let submitted = MessageID(fixed: "783a16ba0f344c09bb5903b67606f38e")
    /// A submit action failed (or was interrupted by a restart).
    public static let submitFailed = MessageID(fixed: "3550d87f29a447688ec07bdacf7f7164")
    /// A flow definition was refused at load.
    public static let flowRefused = MessageID(fixed: "f346aa2184a54dc7a67c32c0c4e70457")
    /// A plugin was refused at load (ABI, ownership, mode, dlopen error).
    public static let pluginRefused = MessageID(fixed: "2948f21f9e3f47b7a6cdad4ba6fd94fe")
    /// The crash guard disabled a plugin that was running when the daemon died.
    public static let pluginCrashed = MessageID(fixed: "c126ad6741fd4a429855a3da02f6e5b8")
    /// The daemon started and is ready.
    public static let daemonStarted = MessageID(fixed: "8f5ff471507e4dcda52d69e21fadea88")
    /// The daemon is stopping.
    public static let daemonStopping = MessageID(fixed: "638b11f959d541dca7e58482982738a7")

    /// Every id above, for catalogs and tests.
    public static let all: [MessageID] = [
        sessionStarted, stepCompleted, submitted, submitFailed, flowRefused, pluginRefused, pluginCrashed,
        daemonStarted, daemonStopping,
    ]
}
