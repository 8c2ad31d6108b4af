import FlowKit

extension PluginContext {
    /// `seconds` (an action's own `timeoutSeconds`), cut to what is left of
    /// the call's deadline less `margin`, and never under `floor`.
    ///
    /// Why the margin: the action must end with its own message ("the
    /// program took too long", "the server did not answer in time") before
    /// flowd gives up on the call and says only that it timed out; the
    /// margin covers what the action still does after its own limit (a
    /// process' grace period after SIGTERM, curl's whole-second rounding).
    package func timeLimit(_ seconds: Double, margin: Double, floor: Double) -> Double {
        guard let left = secondsRemaining else { return seconds }
        return max(floor, min(seconds, left - margin))
    }
}
