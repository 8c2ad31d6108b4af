import DBus
import FlowdSystem
import Glibc
import Testing

/// A message's bytes written by hand, in either byte order, with any
/// header fields: what libdbus would never build (a big-endian message on
/// this machine, unknown or malformed fields).
struct RawMessage {
    enum Value {
        case byte(UInt8)
        case uint32(UInt32)
        /// `s` or `o`: a 32-bit length.
        case string(String)
        /// `g`: one length byte.
        case signature(String)
        /// Bytes as they are, after the field's signature.
        case raw([UInt8])
    }

    var bigEndian = false
    var type: UInt8 = 1
    var flags: UInt8 = 0
    var version: UInt8 = 1
    var serial: UInt32 = 7
    var fields: [(code: UInt8, type: String, value: Value)] = [
        (1, "o", .string("/org/flowd/Test")), (2, "s", .string("org.flowd.Test")), (3, "s", .string("Call")),
    ]
    var body: [UInt8] = []
    /// Overrides the body length the fixed header states.
    var statedBodyLength: UInt32?

    var bytes: [UInt8] {
        var fieldBytes: [UInt8] = []
        for field in fields {
            pad(&fieldBytes, 8, base: 16)
            fieldBytes.append(field.code)
            fieldBytes += [UInt8(field.type.utf8.count)] + Array(field.type.utf8) + [0]
            write(field.value, to: &fieldBytes, base: 16)
        }
        var out: [UInt8] = [bigEndian ? UInt8(ascii: "B") : UInt8(ascii: "l"), type, flags, version]
        out += uint32(statedBodyLength ?? UInt32(body.count)) + uint32(serial) + uint32(UInt32(fieldBytes.count))
        out += fieldBytes
        pad(&out, 8, base: 0)
        return out + body
    }

    func uint32(_ value: UInt32) -> [UInt8] {
        let ordered = bigEndian ? value.bigEndian : value.littleEndian
        return withUnsafeBytes(of: ordered) { Array($0) }
    }

    private func pad(_ bytes: inout [UInt8], _ alignment: Int, base: Int) {
        while (bytes.count + base) % alignment != 0 { bytes.append(0) }
    }

    private func write(_ value: Value, to bytes: inout [UInt8], base: Int) {
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .uint32(let number):
            pad(&bytes, 4, base: base)
            bytes += uint32(number)
        case .string(let string):
            pad(&bytes, 4, base: base)
            bytes += uint32(UInt32(string.utf8.count)) + Array(string.utf8) + [0]
        case .signature(let string): bytes += [UInt8(string.utf8.count)] + Array(string.utf8) + [0]
        case .raw(let raw): bytes += raw
        }
    }
}

/// ``MessageFramer`` cuts a byte stream into whole messages and reads their
/// headers as libdbus does, wherever the reads split them; bytes that are
/// not a valid message are refused, never over-read.
@Suite("The message framer reads headers as libdbus does")
struct MessageFramerTests {
    /// A call libdbus built (with arguments and a sender, as from the bus),
    /// a signal and a reply flowd's encoder built, and a big-endian error.
    static func sampleMessages() throws -> [[UInt8]] {
        let call = Message.methodCall(
            destination: "org.flowd.Forms1", path: "/org/flowd/Forms1/sessions/s1", interface: "org.flowd.Session1",
            member: "SetAnswers")
        try call.append(.vardict(["name": "Ada", "count": .int64(3)]), .string("é"))
        call.sender = ":1.42"
        call.noReplyExpected = false
        var body = WireEncoder()
        body.string("changed")
        let signal = try WireMessage.signal(
            path: "/org/flowd/Forms1", interface: "org.flowd.Forms1", member: "Changed", destination: ":1.42",
            signature: "s", body: body)
        var big = RawMessage()
        big.bigEndian = true
        big.type = 3
        big.serial = 0x0102_0304
        big.fields = [
            (4, "s", .string("org.flowd.Error.Nope")), (5, "u", .uint32(0x0A0B_0C0D)), (6, "s", .string(":1.42")),
            (8, "g", .signature("s")),
        ]
        big.body = big.uint32(3) + Array("why".utf8) + [0]
        return [call.marshaled(), signal.bytes, big.bytes, Message.methodCall(
            destination: nil, path: "/", interface: nil, member: "Ping").marshaled()]
    }

    /// Every whole message `framer` holds now.
    static func drain(_ framer: inout MessageFramer) throws -> [IncomingMessage] {
        var out: [IncomingMessage] = []
        while let message = try framer.next() { out.append(message) }
        return out
    }

    /// The header libdbus reads from `bytes`, in the framer's terms.
    static func libdbusHeader(_ bytes: [UInt8]) throws -> [String] {
        let message = try Message.demarshaling(bytes)
        return [
            "\(message.type)", "\(message.serial)", "\(message.replySerial)", "\(message.path?.rawValue ?? "-")",
            "\(message.interface?.rawValue ?? "-")", "\(message.member?.rawValue ?? "-")",
            "\(message.errorName?.rawValue ?? "-")", "\(message.sender?.rawValue ?? "-")",
            "\(message.destination?.rawValue ?? "-")", message.signature.rawValue, "\(message.noReplyExpected)",
        ]
    }

    static func framerHeader(_ header: IncomingHeader) -> [String] {
        [
            "\(header.type.map { "\($0)" } ?? "?")", "\(header.serial)", "\(header.replySerial)",
            "\(header.path?.rawValue ?? "-")", "\(header.interface?.rawValue ?? "-")", "\(header.member?.rawValue ?? "-")",
            "\(header.errorName?.rawValue ?? "-")", "\(header.sender?.rawValue ?? "-")",
            "\(header.destination?.rawValue ?? "-")", header.signature.rawValue, "\(header.noReplyExpected)",
        ]
    }

    @Test("each message's header is the one libdbus reads, in either byte order")
    func agreesWithLibDBus() throws {
        for bytes in try Self.sampleMessages() {
            var framer = MessageFramer()
            framer.append(bytes)
            let messages = try Self.drain(&framer)
            try #require(messages.count == 1)
            #expect(Self.framerHeader(messages[0].header) == (try Self.libdbusHeader(bytes)))
            #expect(messages[0].bytes == bytes)
            #expect(messages[0].header.length == bytes.count)
            #expect(framer.pendingBytes == 0)
        }
        var framer = MessageFramer()
        framer.append(try Self.sampleMessages()[2])
        let big = try #require(try framer.next()).header
        #expect(big.bigEndian && big.replySerial == 0x0A0B_0C0D && big.serial == 0x0102_0304)
        #expect(Array((try Self.sampleMessages()[2])[big.bodyOffset...]) == [0, 0, 0, 3] + Array("why".utf8) + [0])
    }

    @Test("the same messages wherever the stream is split, and several in one read")
    func splitAtEveryByte() throws {
        let messages = try Self.sampleMessages()
        let stream = messages.flatMap { $0 }
        for split in 0...stream.count {
            var framer = MessageFramer()
            framer.append(Array(stream[..<split]))
            var got = try Self.drain(&framer)
            framer.append(Array(stream[split...]))
            got += try Self.drain(&framer)
            #expect(got.map(\.bytes) == messages, "split at byte \(split)")
            #expect(framer.pendingBytes == 0)
        }
        var framer = MessageFramer()
        var got: [IncomingMessage] = []
        for byte in stream {
            framer.append([byte])
            got += try Self.drain(&framer)
        }
        #expect(got.map(\.bytes) == messages)
        #expect(got.map { Self.framerHeader($0.header) } == (try messages.map(Self.libdbusHeader)))
    }

    /// Header fields the specification may add later are skipped.
    @Test("unknown header fields of a basic type are skipped")
    func unknownFields() throws {
        var raw = RawMessage()
        // 10 is libdbus' container instance: known to it, checked, not used.
        raw.fields += [(42, "u", .uint32(5)), (43, "s", .string("later")), (44, "y", .byte(1)), (10, "o", .string("/c/1"))]
        var framer = MessageFramer()
        framer.append(raw.bytes)
        let header = try #require(try framer.next()).header
        #expect(header.member == "Call" && header.interface == "org.flowd.Test")
        #expect(Self.framerHeader(header) == (try Self.libdbusHeader(raw.bytes)))
    }

    /// Bytes no bus would pass on; each is refused with InconsistentMessage,
    /// and the framer stays refusing (the stream has lost its framing).
    static let malformed: [(String, @Sendable (inout RawMessage) -> Void)] = [
        ("unknown byte order", { _ in }),
        ("protocol version 2", { $0.version = 2 }),
        ("message type 0", { $0.type = 0 }),
        ("serial 0", { $0.serial = 0 }),
        ("a path of type s", { $0.fields[0] = (1, "s", .string("/org/flowd/Test")) }),
        ("a member twice", { $0.fields.append((3, "s", .string("Other"))) }),
        ("a call without member", { $0.fields.removeLast() }),
        ("a signal without interface", { $0.type = 4; $0.fields.remove(at: 1) }),
        ("an error without reply serial", { $0.type = 3; $0.fields = [(4, "s", .string("a.b.C"))] }),
        ("a return without reply serial", { $0.type = 2; $0.fields = [] }),
        ("an invalid path", { $0.fields[0] = (1, "o", .string("/org//flowd")) }),
        ("an invalid member", { $0.fields[2] = (3, "s", .string("1Call")) }),
        ("an invalid sender", { $0.fields.append((7, "s", .string("no bus name"))) }),
        ("an invalid signature", { $0.fields.append((8, "g", .signature("a{"))) }),
        ("the local interface", { $0.fields[1] = (2, "s", .string("org.freedesktop.DBus.Local")) }),
        ("the local path", { $0.fields[0] = (1, "o", .string("/org/freedesktop/DBus/Local")) }),
        ("a body without signature", { $0.body = [1, 2, 3, 4] }),
        ("header field 0", { $0.fields.append((0, "u", .uint32(1))) }),
        ("an unknown field of a container type", { $0.fields.append((50, "as", .raw([0, 0, 0, 0, 0, 0, 0]))) }),
        ("a string without its NUL", { $0.fields[2] = (3, "s", .raw([4, 0, 0, 0] + Array("Call".utf8) + [1])) }),
        ("a string with a NUL inside", { $0.fields[2] = (3, "s", .raw([4, 0, 0, 0, 67, 0, 108, 108, 0])) }),
        ("a string longer than the header", { $0.fields[2] = (3, "s", .raw([0xFF, 0xFF, 0xFF, 0x7F, 0])) }),
        ("a string that is not UTF-8", { $0.fields.append((43, "s", .raw([4, 0, 0, 0, 0xC3, 0x28, 0x41, 0x41, 0]))) }),
        ("padding that is not zero", { $0.fields[2] = (3, "s", .raw([4, 0, 0, 0] + Array("Call".utf8) + [0, 9, 9, 9])) }),
        ("a container instance of type s", { $0.fields.append((10, "s", .string("/c/1"))) }),
        ("an invalid container instance", { $0.fields.append((10, "o", .string("/c//1"))) }),
        ("a container instance twice", { $0.fields += [(10, "o", .string("/c/1")), (10, "o", .string("/c/1"))] }),
        ("a field signature longer than the header", { $0.fields.append((7, "ssssssssssssssss", .raw([]))) }),
    ]

    @Test("malformed headers are refused, and the stream stays refused", arguments: 0..<malformed.count)
    func refusesMalformed(_ index: Int) throws {
        let (name, mutate) = Self.malformed[index]
        var raw = RawMessage()
        mutate(&raw)
        var bytes = raw.bytes
        if name == "unknown byte order" { bytes[0] = UInt8(ascii: "X") }
        var framer = MessageFramer()
        framer.append(bytes)
        framer.append(RawMessage().bytes)  // a good message after it is not reached
        #expect(throws: DBusError.self, "\(name)") { _ = try framer.next() }
        do {
            _ = try framer.next()
            Issue.record("\(name): accepted on the second try")
        } catch {
            #expect(error.name == .inconsistentMessage)
        }
        // libdbus' loader refuses each of these too, but for the unknown
        // field of a container type: the framer refuses what it cannot skip
        // (the specification defines only basic header fields, and the bus
        // daemon removes fields it does not know).
        if name != "an unknown field of a container type" {
            #expect(throws: DBusError.self, "libdbus accepts \(name)") { _ = try Message.demarshaling(bytes) }
        }
    }

    @Test("a length past the limit is refused from the fixed header alone")
    func refusesHugeLengths() throws {
        var raw = RawMessage()
        raw.statedBodyLength = 200 << 20
        var framer = MessageFramer()
        framer.append(Array(raw.bytes.prefix(16)))
        #expect(throws: DBusError.self) { _ = try framer.next() }
        var small = MessageFramer(maximumLength: 64)
        var long = RawMessage()
        long.fields.append((43, "s", .string(String(repeating: "x", count: 64))))
        small.append(Array(long.bytes.prefix(16)))
        #expect(throws: DBusError.self) { _ = try small.next() }
    }

    @Test("a message cut short waits for the rest and is never read past its end")
    func truncatedWaits() throws {
        let bytes = RawMessage().bytes
        for length in 0..<bytes.count {
            var framer = MessageFramer()
            framer.append(Array(bytes.prefix(length)))
            #expect(try framer.next() == nil, "\(length) bytes")
            #expect(framer.pendingBytes == length)
        }
    }

    /// Every single-byte change of the sample messages: the framer never
    /// crashes, and what both it and libdbus accept, both read the same.
    @Test("single-byte corruptions never crash and agree with libdbus")
    func corruptions() throws {
        var agreed = 0
        for bytes in try Self.sampleMessages() {
            for offset in 0..<bytes.count {
                for value: UInt8 in [0, 1, 0x7F, 0xFF, bytes[offset] ^ 0x20] where value != bytes[offset] {
                    var changed = bytes
                    changed[offset] = value
                    var framer = MessageFramer()
                    framer.append(changed)
                    guard let message = try? framer.next(), let expected = try? Self.libdbusHeader(message.bytes) else { continue }
                    if message.header.type == nil {
                        // A type the specification does not know (libdbus'
                        // Message.type reads it as an error): the rest agrees.
                        #expect(changed[1] > 4)
                        #expect(Self.framerHeader(message.header).dropFirst() == expected.dropFirst(), "byte \(offset) = \(value)")
                    } else {
                        #expect(Self.framerHeader(message.header) == expected, "byte \(offset) = \(value)")
                    }
                    agreed += 1
                }
            }
        }
        #expect(agreed > 0)
    }

    /// A message with a file descriptor (`h`), written to a socket with the
    /// descriptor beside it, read back with `recvmsg` a few bytes at a time.
    @Test("file descriptors arrive with their message, close-on-exec")
    func carriesFileDescriptors() throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        var pipeEnds: [Int32] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }

        var raw = RawMessage()
        raw.fields += [(8, "g", .signature("h")), (9, "u", .uint32(1))]
        raw.body = raw.uint32(0)
        let bytes = raw.bytes + RawMessage().bytes
        try #require(Self.send(Array(bytes.prefix(20)), fd: pipeEnds[1], on: pair[0]))
        try #require(Glibc.send(pair[0], Array(bytes.dropFirst(20)), bytes.count - 20, 0) == bytes.count - 20)

        var framer = MessageFramer()
        var messages: [IncomingMessage] = []
        var buffer = [UInt8](repeating: 0, count: 7)
        while messages.count < 2 {
            let (count, fds) = try buffer.withUnsafeMutableBytes { try FileDescriptor.receiveSome(pair[1], into: $0, maximumFDs: 4) }
            try #require(count > 0)
            framer.append(Array(buffer[..<count]), fds: fds)
            messages += try Self.drain(&framer)
        }
        #expect(messages.map(\.bytes) == [raw.bytes, RawMessage().bytes])
        try #require(messages[0].fds.count == 1 && messages[1].fds.isEmpty)
        // The reader hands out a duplicate the caller owns, as libdbus does:
        // the same open file (device and inode) under another number.
        let values = try Message(received: messages[0]).readArguments()
        guard values.count == 1, case .unixFD(let duplicate) = values[0] else {
            Issue.record("read \(values), not one descriptor")
            return
        }
        var ours = stat(), theirs = stat()
        #expect(fstat(duplicate.fileDescriptor, &ours) == 0 && fstat(messages[0].fds[0].fileDescriptor, &theirs) == 0)
        #expect(duplicate.fileDescriptor != messages[0].fds[0].fileDescriptor)
        #expect(ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)
        let received = messages[0].fds[0].fileDescriptor
        #expect(fcntl(received, F_GETFD) & FD_CLOEXEC != 0)
        #expect(write(received, "x", 1) == 1)
        var read = [UInt8](repeating: 0, count: 1)
        #expect(Glibc.read(pipeEnds[0], &read, 1) == 1 && read == [UInt8(ascii: "x")])
        #expect(framer.pendingFDs == 0)
        close(pair[0])
        let end = try buffer.withUnsafeMutableBytes { try FileDescriptor.receiveSome(pair[1], into: $0, maximumFDs: 4) }
        #expect(end.count == 0)
    }

    @Test("a message that counts more descriptors than arrived is refused")
    func missingFileDescriptors() throws {
        var raw = RawMessage()
        raw.fields += [(8, "g", .signature("h")), (9, "u", .uint32(2))]
        raw.body = raw.uint32(0)
        var framer = MessageFramer()
        framer.append(raw.bytes)
        #expect(throws: DBusError.self) { _ = try framer.next() }
    }

    /// `sendmsg` of `bytes` with `fd` as `SCM_RIGHTS`.
    static func send(_ bytes: [UInt8], fd: Int32, on socket: Int32) -> Bool {
        let space = MemoryLayout<cmsghdr>.size + MemoryLayout<Int>.size
        var control = [UInt8](repeating: 0, count: space)
        var bytes = bytes
        return bytes.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { control in
                let header = control.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
                header.pointee.cmsg_len = MemoryLayout<cmsghdr>.size + MemoryLayout<Int32>.size
                header.pointee.cmsg_level = SOL_SOCKET
                header.pointee.cmsg_type = Int32(SCM_RIGHTS)
                control.baseAddress!.advanced(by: MemoryLayout<cmsghdr>.size).storeBytes(of: fd, as: Int32.self)
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                var message = msghdr()
                return withUnsafeMutablePointer(to: &vector) { vector in
                    message.msg_iov = vector
                    message.msg_iovlen = 1
                    message.msg_control = control.baseAddress
                    message.msg_controllen = space
                    return sendmsg(socket, &message, 0) == data.count
                }
            }
        }
    }
}
