import FlowKit
import FlowdSystem
import Foundation

/// `flowd.real-name`: the caller's real name from the account database.
///
/// Looks up `context.callerUID` with `getpwuid_r(3)` (so `/etc/passwd`, LDAP,
/// systemd-userdb, … as `/etc/nsswitch.conf` says) and returns the first
/// comma-separated field of its GECOS, trimmed; nil (the field stays empty)
/// when there is no such user or no name. No options (flowd refuses a flow
/// that gives it any).
struct RealNameProvider: PrefillProvider, DeclaresOptions {
    static let name = "flowd.real-name"
    static let declaredOptions: [PluginOption] = []

    func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue? {
        guard let name = try Self.realName(uid: context.callerUID) else { return nil }
        return .text(name)
    }

    /// The first GECOS field of `uid`, or nil.
    static func realName(uid: UInt32) throws(AccountLookupError) -> String? {
        do {
            guard let user = try UserDatabase.user(id: uid) else { return nil }
            return firstField(user.gecos)
        } catch {
            throw AccountLookupError(description: "flowd.real-name: \(error)")
        }
    }

    /// `"Ada Lovelace,Room 1,,"` → `"Ada Lovelace"`; nil when empty.
    static func firstField(_ gecos: String) -> String? {
        let first = gecos.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : String(trimmed.prefix(200))
    }
}

/// `getpwuid_r` failed (it did not just find nothing).
struct AccountLookupError: Error, CustomStringConvertible {
    var description: String
}
