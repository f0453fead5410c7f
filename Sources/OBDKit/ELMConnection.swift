#if canImport(Glibc)
import Glibc
#endif
import ReaderThread

/// One open link to an ELM327-compatible adapter: a serial line in raw mode or a TCP socket, used by one thread.
/// A command is written with a carriage return; the reply is everything up to the `>` prompt, within a deadline.
final class ELMConnection {
    private(set) var descriptor: Int32 = -1
    /// Largest reply taken: an adapter that never prompts must not fill memory.
    static let maxReplyBytes = 4096

    deinit { close() }

    func open(_ address: OBDAdapterAddress, connectTimeout: Double = 3) throws(OBDError) {
        switch address {
        case .serial(let path, let baud): try openSerial(path, baud: baud)
        case .tcp(let host, let port): try openTCP(host, port: port, timeout: connectTimeout)
        }
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    private func openSerial(_ path: String, baud: Int) throws(OBDError) {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw OBDError(.open(errno: errno)) }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let number = errno
            Glibc.close(fd)
            throw OBDError(.configure(errno: number))
        }
        cfmakeraw(&options)
        options.c_cflag |= tcflag_t(CLOCAL | CREAD)
        options.c_cflag &= ~tcflag_t(CRTSCTS)
        let speed = Self.speed(baud)
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(fd, TCSANOW, &options) == 0 else {
            let number = errno
            Glibc.close(fd)
            throw OBDError(.configure(errno: number))
        }
        tcflush(fd, TCIOFLUSH)
        descriptor = fd
    }

    private static func speed(_ baud: Int) -> speed_t {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 57600: speed_t(B57600)
        case 115200: speed_t(B115200)
        case 230400: speed_t(B230400)
        case 460800: speed_t(B460800)
        case 500000: speed_t(B500000)
        case 921600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 2_000_000: speed_t(B2000000)
        default: speed_t(B38400)
        }
    }

    private func openTCP(_ host: String, port: Int, timeout: Double) throws(OBDError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { throw OBDError(.resolve(host)) }
        defer { freeaddrinfo(list) }
        var lastErrno: Int32 = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastErrno = errno; continue }
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS, Self.wait(fd, events: Int16(POLLOUT), seconds: timeout) else {
                    lastErrno = errno == EINPROGRESS ? ETIMEDOUT : errno
                    Glibc.close(fd)
                    continue
                }
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                guard error == 0 else { lastErrno = error; Glibc.close(fd); continue }
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            descriptor = fd
            return
        }
        throw OBDError(.connect(errno: lastErrno))
    }

    /// Sends `command` and returns the reply before the prompt. Anything the adapter sent before the command
    /// (a late answer to a command that timed out) is discarded first.
    func command(_ command: String, timeout: Double) throws(OBDError) -> String {
        try discardPending()
        let bytes = Array((command + "\r").utf8)
        var written = 0
        let deadline = monotonicSeconds() + timeout
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { written += count; continue }
            if count < 0, errno == EINTR { continue }
            guard count < 0, errno == EAGAIN else { throw count == 0 ? OBDError(.closed) : OBDError(.io(errno: errno)) }
            guard Self.wait(descriptor, events: Int16(POLLOUT), seconds: deadline - monotonicSeconds()) else { throw OBDError(.timeout) }
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let remaining = deadline - monotonicSeconds()
            guard remaining > 0, Self.wait(descriptor, events: Int16(POLLIN), seconds: remaining) else { throw OBDError(.timeout) }
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 { throw OBDError(.closed) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw OBDError(.io(errno: errno))
            }
            // Some adapters send NUL bytes after a reset: not part of any answer.
            reply += buffer[..<count].filter { $0 != 0 }
            if let prompt = reply.lastIndex(of: UInt8(ascii: ">")) {
                return String(decoding: reply[..<prompt], as: UTF8.self)
            }
            guard reply.count <= Self.maxReplyBytes else { throw OBDError(.overflow) }
        }
    }

    private func discardPending() throws(OBDError) {
        var buffer = [UInt8](repeating: 0, count: 512)
        while Self.wait(descriptor, events: Int16(POLLIN), seconds: 0) {
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 { throw OBDError(.closed) }
            if count < 0 { if errno == EINTR { continue }; if errno == EAGAIN { return }; throw OBDError(.io(errno: errno)) }
        }
    }

    /// Whether `fd` became ready for `events` within `seconds`; a hang-up or error counts as ready (the read or
    /// write then tells which).
    static func wait(_ fd: Int32, events: Int16, seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let milliseconds = Int32(min(Double(Int32.max), max(0, seconds * 1000).rounded(.up)))
        while true {
            let result = poll(&entry, 1, milliseconds)
            if result < 0, errno == EINTR { continue }
            return result > 0
        }
    }

}
