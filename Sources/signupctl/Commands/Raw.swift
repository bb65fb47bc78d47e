import ArgumentParser
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

extension SignupCtl {
    /// `signupctl raw`
    struct Raw: FailingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Relay standard input to signupd and its replies to standard output, line by line.",
            discussion: """
                For debugging and for jq: `echo '{"op":"describe"}' | signupctl raw | jq .` \
                The greeting is printed too. At the end of input signupctl half-closes the \
                connection; signupd answers what is pending, then closes, and signupctl exits. \
                The lines are the protocol's own (PROTOCOL.md); --json only changes how a failure \
                to connect is reported.
                """
        )

        @OptionGroup var connection: ConnectionOptions

        func body() throws(CommandFailure) {
            let daemon = try connection.connect()
            UnixIO.writeAll(1, Array(RawLine.text(of: daemon.hello).utf8) + [0x0A])
            UnixIO.writeAll(1, daemon.takeBuffered())
            var inputOpen = true
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                var fds = [pollfd(fd: daemon.fd, events: Int16(POLLIN), revents: 0)]
                if inputOpen { fds.append(pollfd(fd: 0, events: Int16(POLLIN), revents: 0)) }
                guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { break }
                if inputOpen, fds.count > 1, fds[1].revents != 0 {
                    let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                    if count > 0 {
                        try daemon.sendRaw(Array(chunk[..<count]))
                    } else if count == 0 || errno != EINTR {
                        inputOpen = false
                        shutdown(daemon.fd, Int32(SHUT_WR))
                    }
                }
                if fds[0].revents != 0 {
                    guard try daemon.fill() else { return }
                    UnixIO.writeAll(1, daemon.takeBuffered())
                }
            }
        }
    }
}
