// The plugin's messages, compiled into it: nothing to find at run time (no
// resource bundle). Each message lists its languages; FlowKit picks one for
// the session's locale by flowd's own chain (de_CH → de → en) and fills in
// `{name}` arguments. Add a language by adding a line to every message (the
// tests check that each message has every language of `Messages.locales`).
import FlowKit

enum Messages {
    /// The languages every message has.
    static let locales: Set<String> = ["en", "de"]

    static let postcodeFormat = LocalizedMessage([
        "en": "{label} must be five digits, such as 10115.",
        "de": "{label} muss aus fünf Ziffern bestehen, z. B. 10115.",
    ])

    static let postcodeRule = LocalizedMessage([
        "en": "Five digits, such as 10115",
        "de": "Fünf Ziffern, z. B. 10115",
    ])

    /// Every message, for the tests.
    static let all = [postcodeFormat, postcodeRule]
}
