// flowd.spool: writes each submission as a JSON file into a spool directory,
// atomically and idempotently. Something else (a cron job, a path unit, a
// person) picks the files up.
import FlowKit
import FlowdPluginSupport
import Foundation

/// `flowd.spool`.
///
/// Options:
/// - `directory` (absolute path): where the files go. Default
///   `<stateDirectory>/spool/<flowID>`. Created mode 0700 when missing.
/// - `includeSecure` (bool, default false): also write secure answers. Off by
///   default, so secrets never reach the disk unless an administrator asks.
///
/// The file is `<idempotency key>.json`, mode 0600: written to a temporary
/// file in the same directory (`O_CREAT|O_EXCL`), fsynced, renamed over the
/// final name, and the directory fsynced, so after success the file survives a
/// power cut and a reader never sees half a file. A retry of the same answers
/// (same key) replaces the file; there is never a second one. Changed answers
/// get a new key, and so a file of their own: a reader that wants one file per
/// session takes the newest for each `session`.
///
/// The receipt is `{"reference": <idempotency key>}`; the file's path is not
/// in it (receipts reach clients, and the daemon's layout is not their business).
struct SpoolAction: SubmitAction, DeclaresOptions {
    static let name = "flowd.spool"
    static let declaredOptions = [
        PluginOption(name: "directory", type: .string),
        PluginOption(name: "includeSecure", type: .bool),
    ]

    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        let directory = try Self.directory(options: options, context: context)
        let key = submission.idempotencyKey
        guard SpoolFile.isSafeName(key) else {
            throw PluginConfigurationError(Self.name, "the idempotency key is not a plain file name")
        }
        let document = SubmissionDocument(submission, includeSecure: try options.bool("includeSecure") ?? false)
        let bytes = try document.encoded()
        try Task.checkCancellation()
        try SpoolFile.writeAtomically(Array(bytes), directory: directory, name: key + ".json")
        return SubmitReceipt(["reference": .string(key)])
    }

    /// The configured directory, or the default under the state directory.
    static func directory(options: PluginOptions, context: PluginContext) throws -> String {
        if let configured = try options.string("directory") {
            guard configured.hasPrefix("/") else {
                throw PluginConfigurationError(name, "option \"directory\" must be an absolute path")
            }
            try SpoolFile.makeDirectories(configured)
            return configured
        }
        guard SpoolFile.isSafeName(context.flowID) else {
            throw PluginConfigurationError(name, "flow id \"\(context.flowID)\" cannot name a directory")
        }
        guard context.stateDirectory.hasPrefix("/") else {
            throw PluginConfigurationError(name, "the daemon's state directory is not an absolute path")
        }
        let path = context.stateDirectory + "/spool/" + context.flowID
        try SpoolFile.makeDirectories(path)
        return path
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "flowd.spool", version: "1.0",
        capabilities: [.submitAction(SpoolAction.name, SpoolAction())]
    ).exportRetained()
}
