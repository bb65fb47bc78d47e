import Protocol

#if canImport(Glibc)
import Glibc
#endif

/// The full-screen form: keys go to the daemon as `set`, its events come back and are
/// drawn. The terminal is restored however the loop ends.
enum InteractiveForm {
    static func run(form name: String, connection options: ConnectionOptions) throws {
        let client: FormClient
        do {
            client = try FormClient(connection: try options.connect(), formName: name)
        } catch {
            Report.fail(error)
        }
        var screen = FormScreen(view: client.view, color: Terminal.colorAllowed)
        screen.server = client.connection.hello["server"]?.stringValue ?? "signupd"
        Terminal.enter()
        let outcome = loop(client: client, screen: &screen)
        Terminal.restore()
        switch outcome {
        case .finished(let result):
            print(result.ok ? "\(result.message): \(result.user ?? "")" : result.message)
            if let token = result.token { print(token) }
            exit(result.ok ? ExitStatus.success.rawValue : ExitStatus.refused.rawValue)
        case .cancelled:
            exit(130)
        case .failed(let failure):
            Report.fail(failure)
        }
    }

    enum Outcome {
        case finished(SessionView.Result)
        case cancelled
        case failed(CommandFailure)
    }

    private static func loop(client: FormClient, screen: inout FormScreen) -> Outcome {
        var decoder = KeyDecoder()
        let fields = client.view.form.fields
        var input = [UInt8](repeating: 0, count: 1024)
        draw(screen)
        while true {
            var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: client.connection.fd, events: Int16(POLLIN), revents: 0)]
            // While busy, wake up to turn the spinner.
            let ready = poll(&fds, 2, screen.view.busy ? 100 : -1)
            if ready < 0 && errno != EINTR { return .failed(CommandFailure(.protocolError, "poll: \(errnoText())")) }
            if ready == 0 { screen.spinnerFrame += 1 }
            if fds[1].revents != 0 {
                do {
                    guard try client.connection.fill() else {
                        return .failed(CommandFailure(.protocolError, "signupd went away"))
                    }
                    while let line = client.connection.bufferedLine() {
                        guard let message = try? JSONParser.parse(line).objectValue else { continue }
                        if message["event"]?.stringValue == "bye" {
                            return .failed(CommandFailure(.protocolError, "signupd closed the connection: \(message["reason"]?.stringValue ?? "")"))
                        }
                        screen.view.apply(message)
                        if message["event"]?.stringValue == "error" { screen.notice = message["message"]?.stringValue }
                        if let result = screen.view.result, result.ok {
                            screen.notice = "Press any key to exit."
                        }
                    }
                } catch {
                    return .failed(error)
                }
            }
            if fds[0].revents != 0 {
                let count = input.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count == 0 { return .cancelled }
                for key in decoder.decode(count > 0 ? Array(input[..<count]) : []) {
                    if let result = screen.view.result, result.ok { return .finished(result) }
                    let field = fields[screen.focus]
                    var value = screen.values[field.name] ?? ""
                    switch key {
                    case .escape, .interrupt: return .cancelled
                    case .next: screen.focus = (screen.focus + 1) % fields.count
                    case .previous: screen.focus = (screen.focus + fields.count - 1) % fields.count
                    case .enter:
                        screen.notice = nil
                        if screen.view.enabled {
                            do { try client.submit() } catch { return .failed(error) }
                        } else if screen.focus < fields.count - 1 {
                            screen.focus += 1
                        } else {
                            screen.notice = "Not ready: every field must be ✓ first."
                        }
                    case .backspace, .clearField, .character:
                        if key == .backspace { if !value.isEmpty { value.removeLast() } }
                        if key == .clearField { value = "" }
                        if case .character(let c) = key { value.append(c) }
                        screen.values[field.name] = value
                        screen.view.result = nil
                        do { try client.set(field.name, value) } catch { return .failed(error) }
                    }
                }
            }
            draw(screen)
        }
    }

    private static func draw(_ screen: FormScreen) {
        let size = Terminal.size
        let (lines, cursor) = screen.render(width: size.columns)
        var out = "\u{1B}[?25l\u{1B}[H"
        for line in lines.prefix(size.rows) { out += line + "\u{1B}[K\r\n" }
        out += "\u{1B}[J"
        if let cursor { out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h" }
        Terminal.write(out)
    }
}
