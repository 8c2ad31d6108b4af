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
