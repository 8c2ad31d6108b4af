@testable import FlowDaemon
import FlowProtocol
import Testing

/// The cache's key hashes a session id from its last sixteen characters
/// without `Hasher` (``SessionCache/Key``): equal ids must hash alike
/// wherever their bytes live, ids must spread over a table's buckets, and
/// ids that hash alike must still be told apart.
@Suite("the session cache's key")
struct SessionCacheKeyTests {
    @Test("equal ids hash alike, whatever their storage")
    func equalIDsHashAlike() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let id = SessionID.make(using: &generator)
            // A second string with the same characters, in storage of its own.
            let again = String(decoding: Array(id.utf8), as: UTF8.self)
            #expect(SessionCache.Key(id) == SessionCache.Key(again))
            for seed in [0, 1, -7, Int.max] {
                #expect(SessionCache.Key(id)._rawHashValue(seed: seed) == SessionCache.Key(again)._rawHashValue(seed: seed))
            }
            #expect(SessionCache.Key(id).hashValue == SessionCache.Key(again).hashValue)
        }
        // Short ids (as tests make) are hashed whole.
        #expect(SessionCache.Key("s1")._rawHashValue(seed: 3) == SessionCache.Key(String("s1".reversed().reversed()))._rawHashValue(seed: 3))
        #expect(SessionCache.Key("s1") != SessionCache.Key("s2"))
    }

    @Test("random ids fill a table's buckets as evenly as a random function would")
    func idsSpread() {
        var generator = SystemRandomNumberGenerator()
        let count = 4096
        let ids = (0..<count).map { _ in SessionID.make(using: &generator) }
        for seed in [0, 0x5A5A_1234] {
            // 4096 ids into 4096 buckets by the low twelve bits: a random
            // function leaves about 1 - 1/e of them used (2,589); a hash that
            // ignored some characters or mixed badly leaves far fewer.
            let used = Set(ids.map { SessionCache.Key($0)._rawHashValue(seed: seed) & (count - 1) }).count
            #expect(used > 2_450, "only \(used) of \(count) buckets used with seed \(seed)")
        }
        // Every id's hash moves when any one of its last sixteen characters does.
        let id = ids[0]
        let base = SessionCache.Key(id)._rawHashValue(seed: 0)
        var bytes = Array(id.utf8)
        for index in 16..<32 {
            let saved = bytes[index]
            bytes[index] = saved == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
            #expect(SessionCache.Key(String(decoding: bytes, as: UTF8.self))._rawHashValue(seed: 0) != base, "character \(index)")
            bytes[index] = saved
        }
    }

    @Test("ids that hash alike stay apart in a dictionary")
    func collisionsStayApart() {
        // The same last sixteen characters: the same hash, different ids.
        let tail = "0123456789abcdef"
        let first = "aaaaaaaaaaaaaaaa" + tail
        let second = "bbbbbbbbbbbbbbbb" + tail
        #expect(SessionCache.Key(first)._rawHashValue(seed: 9) == SessionCache.Key(second)._rawHashValue(seed: 9))
        #expect(SessionCache.Key(first) != SessionCache.Key(second))
        var table: [SessionCache.Key: Int] = [:]
        table[SessionCache.Key(first)] = 1
        table[SessionCache.Key(second)] = 2
        #expect(table.count == 2)
        #expect(table[SessionCache.Key(first)] == 1)
        #expect(table[SessionCache.Key(second)] == 2)
        table[SessionCache.Key(first)] = nil
        #expect(table[SessionCache.Key(second)] == 2)
        #expect(table[SessionCache.Key(first)] == nil)
    }
}
