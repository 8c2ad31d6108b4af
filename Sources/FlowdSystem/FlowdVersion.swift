/// The version of flowd: the daemon (`flowd --version`, the Manager's
/// `Version` property), flowctl (`flowctl --version`) and the shipped plugins
/// (the webhook's `User-Agent`) are one release and say one number.
///
/// It lives in FlowdSystem because every binary and every shipped plugin
/// links this module, and nothing else is linked by all of them.
package enum FlowdVersion {
    /// The release, `MAJOR.MINOR.PATCH`.
    package static let current = "0.1.0"
}
