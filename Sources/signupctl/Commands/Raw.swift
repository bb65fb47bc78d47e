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
            UnixIO.writeAll(1, Array(RawLine.text(of: daemon.info.hello).utf8) + [0x0A])
            UnixIO.writeAll(1, daemon.takeBuffered())
            var inputOpen = true
            var chunk = [UInt8](repeating: 0, count: 65536)
            // Input read and not yet taken by the socket. Sending never blocks: signupd stops
            // reading a client that does not read its answers, so a blocking write of a large
            // input while its answers piled up waited for ever (20,000 pings hung).
            var unsent: ArraySlice<UInt8> = []
            var halfClosed = false
            while true {
                var fds = [pollfd(fd: daemon.fd, events: Int16(POLLIN) | (unsent.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)]
                // More input only once the last is sent: at most one chunk is held.
                let readingInput = inputOpen && unsent.isEmpty
                if readingInput { fds.append(pollfd(fd: 0, events: Int16(POLLIN), revents: 0)) }
                guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { break }
                if readingInput, fds[1].revents != 0 {
                    let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                    if count > 0 {
                        unsent = chunk[..<count]
                    } else if count == 0 || errno != EINTR {
                        inputOpen = false
                    }
                }
                if !unsent.isEmpty, fds[0].revents & Int16(POLLOUT) != 0 || fds.count > 1 {
                    let sent = unsent.withUnsafeBytes { send(daemon.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                    if sent > 0 {
                        unsent = unsent.dropFirst(sent)
                    } else if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                        // signupd closed the connection (its `bye` says why): read what it said.
                        unsent = []
                        inputOpen = false
                    }
                }
                if !inputOpen, unsent.isEmpty, !halfClosed {
                    halfClosed = true
                    shutdown(daemon.fd, Int32(SHUT_WR))
                }
                if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    guard try daemon.fill() else { return }
                    UnixIO.writeAll(1, daemon.takeBuffered())
                }
            }
        }
    }
}
