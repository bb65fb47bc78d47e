import SignupClient
import SignupProtocol
import UnixIO

#if canImport(Glibc)
import Glibc
#endif

/// The full-screen form on the controlling terminal: keys go to the daemon as `set`, its
/// events come back and are drawn. Enter on the last field always sends `submit` and the
/// daemon decides; when it answers `not_ready` only because a check is still running,
/// the form submits again as soon as the daemon says `enabled`.
enum InteractiveForm {
    enum Outcome {
        case finished(SessionView.Result)
        case cancelled
        case failed(CommandFailure)
    }

    /// Runs the form that `client` holds on the terminal `tty`.
    static func run(client: FormClient, tty: Int32) -> Outcome {
        var screen = FormScreen(view: client.view, color: Terminal.colorAllowed)
        screen.text = ScreenText.forLocale(client.locale)
        screen.server = client.connection.info.server
        for field in client.view.form.fields { screen.editors[field.name] = LineEditor() }
        let resize = Terminal.makeResizePipe()
        Terminal.enter(.fullScreen, fd: tty, resizePipe: resize?.write ?? -1)
        var loop = Loop(client: client, tty: tty, resizeRead: resize?.read ?? -1)
        let outcome = loop.run(&screen)
        Terminal.restore()
        if let resize {
            close(resize.read)
            close(resize.write)
        }
        return outcome
    }

    private struct Loop {
        let client: FormClient
        let tty: Int32
        let resizeRead: Int32
        var decoder = KeyDecoder()
        /// When to send `submit`: one per Enter, none after its result.
        var gate = SubmitGate()

        init(client: FormClient, tty: Int32, resizeRead: Int32) {
            self.client = client
            self.tty = tty
            self.resizeRead = resizeRead
        }

        mutating func run(_ screen: inout FormScreen) -> Outcome {
            var input = [UInt8](repeating: 0, count: 4096)
            draw(screen)
            while true {
                var fds = [
                    pollfd(fd: tty, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: client.connection.fd, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: resizeRead, events: Int16(POLLIN), revents: 0),
                ]
                // A cut-off escape sequence waits 50 ms for its rest; the spinner turns every 100 ms.
                let timeout: Int32 = decoder.hasPending ? 50 : screen.view.busy ? 100 : -1
                let ready = poll(&fds, nfds_t(fds.count), timeout)
                if ready < 0 && errno != EINTR { return .failed(CommandFailure(.protocolError, "poll: \(UnixIO.errnoText())")) }
                if ready == 0 {
                    if decoder.hasPending {
                        if let outcome = handle(decoder.flush(), &screen) { return outcome }
                    } else {
                        screen.spinnerFrame += 1
                    }
                }
                if ready > 0 && fds[2].revents != 0 {
                    var drain = [UInt8](repeating: 0, count: 64)
                    _ = read(resizeRead, &drain, drain.count)
                    Terminal.write("\u{1B}[2J")
                }
                if ready > 0 && fds[1].revents != 0 {
                    if let outcome = receive(&screen) { return outcome }
                }
                if ready > 0 && fds[0].revents != 0 {
                    let count = input.withUnsafeMutableBytes { read(tty, $0.baseAddress, $0.count) }
                    if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return .cancelled }
                    if count > 0, let outcome = handle(decoder.decode(Array(input[..<count])), &screen) { return outcome }
                }
                draw(screen)
            }
        }

        /// Applies what the daemon sent.
        mutating func receive(_ screen: inout FormScreen) -> Outcome? {
            do {
                guard try client.connection.fill() else {
                    return .failed(CommandFailure(.protocolError, Say.pick("signupd went away", "服务已断开"), code: "disconnected"))
                }
                while let received = try client.connection.bufferedMessage() {
                    if case .bye(let reason) = received.event {
                        return .failed(CommandFailure(.protocolError, Say.pick("signupd closed the connection: \(reason)", "服务关闭了连接：\(Say.byeReason(reason))"), code: "disconnected"))
                    }
                    // The daemon ended the form itself (left alone past --session-idle-timeout);
                    // a form already done keeps its result.
                    if case .closed(let session, let reason?, _) = received.event, session == screen.view.session {
                        if let result = screen.view.result, result.ok { return .finished(result) }
                        return .failed(.formClosed(reason))
                    }
                    screen.view.apply(received.event)
                    switch received.event {
                    case .session(_, _, .busy, _):
                        gate.busy(screen.view.busy, id: received.id)
                    case .session(_, _, .enabled, _):
                        if gate.enabled(screen.view.enabled) == .submit { try submit(&screen) }
                    case .session(_, _, .result, _):
                        gate.result()
                        // A success says "any key exits" on the keys line; no notice repeats it.
                        screen.notice = nil
                    default:
                        if let refusal = received.refusal { refused(refusal, id: received.id, &screen) }
                    }
                    if !received.isResult, !screen.view.validating,
                        let problem = screen.view.firstProblem, problem.validation.state == .failed, gate.checkFailed() {
                        // The check it waited for failed: the daemon will not enable submit.
                        screen.notice = screen.text.notSubmitted(problem.field.label, problem.validation.message)
                    }
                }
            } catch {
                return .failed(error)
            }
            return nil
        }

        /// An `error` event: the gate decides whether to wait for `enabled`; otherwise the
        /// footer says why the request was refused.
        mutating func refused(_ refusal: SignupServerError, id: RequestID?, _ screen: inout FormScreen) {
            let action = gate.error(code: refusal.code.known, id: id, checksRunning: screen.view.validating || screen.view.busy)
            if action == .wait {
                screen.notice = screen.text.waitingForChecks  // submitted again on `enabled`
            } else if refusal.code == .known(.notReady), let problem = screen.view.firstProblem, problem.validation.state == .failed {
                // Refused because a field failed, whether its verdict came before the
                // submit or after: name the field and why, as when waiting ends.
                screen.notice = screen.text.notSubmitted(problem.field.label, problem.validation.message)
            } else {
                screen.notice = Say.pick(refusal.message, Say.refusal(refusal.code.rawValue))
            }
        }

        mutating func submit(_ screen: inout FormScreen) throws(CommandFailure) {
            screen.notice = nil
            gate.sent(try client.submit())
        }

        /// Applies keys.
        mutating func handle(_ keys: [Key], _ screen: inout FormScreen) -> Outcome? {
            let fields = client.view.form.fields
            let size = Terminal.size(of: tty)
            for key in keys {
                if let result = screen.view.result, result.ok { return .finished(result) }
                let field = fields[screen.focus]
                if screen.tooSmall(columns: size.columns, rows: size.rows) {
                    // Nothing is visible to edit: only leaving works.
                    if key == .escape || key == .interrupt { return .cancelled }
                    if key != .redraw { screen.droppedKeys = true }
                    continue
                }
                switch key {
                case .escape, .interrupt: return .cancelled
                case .tab, .down: screen.focus = (screen.focus + 1) % fields.count
                case .backTab, .up: screen.focus = (screen.focus + fields.count - 1) % fields.count
                case .redraw: Terminal.write("\u{1B}[2J")
                case .suspend: screen.notice = screen.text.noSuspend
                case .pastedNewline: if screen.focus < fields.count - 1 { screen.focus += 1 }  // a paste never submits
                case .enter:
                    if screen.focus < fields.count - 1 {
                        screen.focus += 1
                    } else if gate.enter() == .submit {
                        do { try submit(&screen) } catch { return .failed(error) }
                    }
                default:
                    var editor = screen.editors[field.name] ?? LineEditor()
                    guard editor.apply(key) else {
                        screen.editors[field.name] = editor  // the cursor may have moved
                        continue
                    }
                    screen.editors[field.name] = editor
                    screen.view.result = nil
                    gate.edited()  // an edit after Enter withdraws a submit not yet taken
                    screen.notice = nil
                    do { try client.set(field.name, editor.text) } catch { return .failed(error) }
                }
            }
            return nil
        }

        func draw(_ screen: FormScreen) {
            let size = Terminal.size(of: tty)
            let frame = screen.render(columns: size.columns, rows: size.rows)
            var out = "\u{1B}[?25l"
            for (row, line) in frame.lines.enumerated() {
                out += "\u{1B}[\(row + 1);1H" + screen.encode(line) + "\u{1B}[K"
            }
            if let cursor = frame.cursor { out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h" }
            Terminal.write(out)
        }
    }
}
