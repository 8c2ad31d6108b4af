import Glibc

/// The account database through the C library's name service (`getpwnam_r(3)`,
/// `getpwuid_r(3)`, `getgrnam_r(3)`): `/etc/passwd`, LDAP, systemd-userdb, …
/// as `/etc/nsswitch.conf` says.
///
/// "Not found" is nil or false. A lookup that fails (rather than finding
/// nothing) throws, so a caller can fail closed.
package enum UserDatabase {
    /// One user account.
    package struct User: Sendable, Hashable {
        /// The login name.
        package var name: String
        /// The user id.
        package var uid: UInt32
        /// The GECOS field (`Ada Lovelace,Room 1,,`).
        package var gecos: String
    }

    /// The user called `name`.
    package static func user(named name: String) throws(SystemCallError) -> User? {
        try lookup("getpwnam_r") { buffer, size in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let rc = getpwnam_r(name, &entry, buffer, size, &result)
            return (rc, result == nil ? nil : User(entry))
        }
    }

    /// The user with id `uid`.
    package static func user(id uid: UInt32) throws(SystemCallError) -> User? {
        try lookup("getpwuid_r") { buffer, size in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let rc = getpwuid_r(uid_t(uid), &entry, buffer, size, &result)
            return (rc, result == nil ? nil : User(entry))
        }
    }

    /// Whether a group called `name` exists.
    package static func groupExists(named name: String) throws(SystemCallError) -> Bool {
        let found: Bool? = try lookup("getgrnam_r") { buffer, size in
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            let rc = getgrnam_r(name, &entry, buffer, size, &result)
            return (rc, result == nil ? nil : true)
        }
        return found ?? false
    }

    /// Runs a `get*_r` call, doubling the buffer on `ERANGE` (up to 1 MiB).
    /// "Not found" (0 with no result, or `ENOENT`, `ESRCH`, `EBADF`, `EPERM`
    /// as the manual page allows) is nil; any other error throws.
    private static func lookup<T>(
        _ call: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> (Int32, T?)
    ) throws(SystemCallError) -> T? {
        var size = 16 * 1024
        while true {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let (rc, found) = body(buffer, size)
            if rc == 0 { return found }
            if rc == ERANGE && size < 1 << 20 {
                size *= 2
                continue
            }
            if [ENOENT, ESRCH, EBADF, EPERM].contains(rc) { return nil }
            throw SystemCallError(call, errno: Errno(rawValue: rc))
        }
    }
}

extension UserDatabase.User {
    fileprivate init(_ entry: passwd) {
        name = entry.pw_name.map { String(cString: $0) } ?? ""
        uid = UInt32(entry.pw_uid)
        gecos = entry.pw_gecos.map { String(cString: $0) } ?? ""
    }
}
