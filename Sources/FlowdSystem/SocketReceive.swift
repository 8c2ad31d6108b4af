import Glibc

extension FileDescriptor {
    /// One `recvmsg(2)` of what the stream socket `fd` holds now, up to
    /// `buffer.count` bytes, with the file descriptors that came with them
    /// (`SCM_RIGHTS`, at most `maximumFDs`). `MSG_DONTWAIT`: it never blocks
    /// (an empty socket throws ``Errno/wouldBlock``); `MSG_CMSG_CLOEXEC`: the
    /// received descriptors are close-on-exec from the start, so no child
    /// started meanwhile inherits them. A count of 0 is the end of the
    /// stream. When the peer sent more descriptors than fit, those that
    /// arrived are closed and it throws `EMSGSIZE`: the bytes they came with
    /// cannot be used without them.
    package static func receiveSome(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, maximumFDs: Int
    ) throws(SystemCallError) -> (count: Int, fds: [FileDescriptor]) {
        let controlLength = Int(cmsgSpace(MemoryLayout<Int32>.size * max(maximumFDs, 1)))
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: controlLength, alignment: MemoryLayout<cmsghdr>.alignment)
        defer { control.deallocate() }
        control.initializeMemory(as: UInt8.self, repeating: 0)
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        var header = msghdr()
        let count = try withUnsafeMutablePointer(to: &vector) { (vector) throws(SystemCallError) -> Int in
            header.msg_iov = vector
            header.msg_iovlen = 1
            header.msg_control = control.baseAddress
            header.msg_controllen = controlLength
            return try SystemCall.check("recvmsg") {
                recvmsg(fd, &header, Int32(MSG_DONTWAIT | MSG_CMSG_CLOEXEC))
            }
        }
        var fds: [FileDescriptor] = []
        var message = header
        var cmsg = cmsgFirst(&message)
        while let current = cmsg {
            if current.pointee.cmsg_level == SOL_SOCKET && current.pointee.cmsg_type == SCM_RIGHTS {
                let dataLength = Int(current.pointee.cmsg_len) - Int(cmsgLength(0))
                let data = UnsafeRawPointer(current).advanced(by: Int(cmsgLength(0)))
                for index in 0..<(dataLength / MemoryLayout<Int32>.size) {
                    let received = data.loadUnaligned(fromByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self)
                    fds.append(FileDescriptor(owning: received))
                }
            }
            cmsg = cmsgNext(&message, current)
        }
        if header.msg_flags & Int32(MSG_CTRUNC) != 0 {
            for received in fds { received.close() }
            throw SystemCallError("recvmsg (more file descriptors than \(maximumFDs))", errno: Errno(rawValue: EMSGSIZE))
        }
        return (count, fds)
    }
}

// The CMSG_* macros, which Swift does not import (also used by SocketSend.swift).

func cmsgAlign(_ length: Int) -> Int {
    (length + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
}

func cmsgLength(_ length: Int) -> Int {
    cmsgAlign(MemoryLayout<cmsghdr>.size) + length
}

func cmsgSpace(_ length: Int) -> Int {
    cmsgAlign(MemoryLayout<cmsghdr>.size) + cmsgAlign(length)
}

func cmsgFirst(_ message: inout msghdr) -> UnsafeMutablePointer<cmsghdr>? {
    guard message.msg_controllen >= MemoryLayout<cmsghdr>.size, let control = message.msg_control else { return nil }
    return control.assumingMemoryBound(to: cmsghdr.self)
}

func cmsgNext(_ message: inout msghdr, _ current: UnsafeMutablePointer<cmsghdr>) -> UnsafeMutablePointer<cmsghdr>? {
    guard let control = message.msg_control, Int(current.pointee.cmsg_len) >= MemoryLayout<cmsghdr>.size else { return nil }
    let end = UnsafeMutableRawPointer(control) + Int(message.msg_controllen)
    let next = UnsafeMutableRawPointer(current) + cmsgAlign(Int(current.pointee.cmsg_len))
    guard next + MemoryLayout<cmsghdr>.size <= end,
        next + cmsgAlign(Int(next.assumingMemoryBound(to: cmsghdr.self).pointee.cmsg_len)) <= end
    else { return nil }
    return next.assumingMemoryBound(to: cmsghdr.self)
}
