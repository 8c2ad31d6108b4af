import Glibc

extension FileDescriptor {
    /// One `send(2)` of as much of `bytes` as the stream socket `fd` takes
    /// now, with `MSG_DONTWAIT | MSG_NOSIGNAL`: it never blocks, whatever the
    /// descriptor's mode, and a peer that went away is `EPIPE`, not
    /// `SIGPIPE`. The count written; a full socket throws ``Errno/wouldBlock``.
    package static func sendSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try SystemCall.check("send") {
            Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
    }
}

extension FileDescriptor {
    /// ``sendSome(_:_:)`` with file descriptors (`sendmsg(2)`, `SCM_RIGHTS`):
    /// the descriptors travel with the first byte the socket takes, so a
    /// partial write still delivered all of them.
    package static func sendSome(
        _ fd: Int32, _ bytes: UnsafeRawBufferPointer, fds: [Int32]
    ) throws(SystemCallError) -> Int {
        guard !fds.isEmpty else { return try sendSome(fd, bytes) }
        let dataLength = MemoryLayout<Int32>.size * fds.count
        let controlLength = cmsgSpace(dataLength)
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: controlLength, alignment: MemoryLayout<cmsghdr>.alignment)
        defer { control.deallocate() }
        control.initializeMemory(as: UInt8.self, repeating: 0)
        let header = control.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: cmsghdr.self)
        header.pointee.cmsg_len = Int(cmsgLength(dataLength))
        header.pointee.cmsg_level = SOL_SOCKET
        header.pointee.cmsg_type = Int32(SCM_RIGHTS)
        let data = UnsafeMutableRawPointer(header).advanced(by: cmsgLength(0))
        for (index, descriptor) in fds.enumerated() {
            data.storeBytes(of: descriptor, toByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self)
        }
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        return try withUnsafeMutablePointer(to: &vector) { (vector) throws(SystemCallError) -> Int in
            var message = msghdr()
            message.msg_iov = vector
            message.msg_iovlen = 1
            message.msg_control = control.baseAddress
            message.msg_controllen = controlLength
            return try SystemCall.check("sendmsg") { sendmsg(fd, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        }
    }
}
