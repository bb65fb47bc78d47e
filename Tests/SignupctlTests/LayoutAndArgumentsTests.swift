import SignupProtocol
import Testing

@testable import signupctl

@Suite("The form's screen")
struct FormScreenTests {
    static let signup = FormDescription(
        name: "signup",
        fields: [.init(name: "username", secret: false, label: "Username"), .init(name: "password", secret: true, label: "Password"),
                 .init(name: "repeatedPassword", secret: true, label: "Repeat password")],
        submitLabel: "Sign up")

    static func screen(value: String = "alice") -> FormScreen {
        var view = SessionView(form: signup)
        view.session = "0123456789abcdef"
        var screen = FormScreen(view: view, color: false)
        var editor = LineEditor()
        editor.apply(.text(value))
        screen.editors["username"] = editor
        return screen
    }

    @Test("every frame fills the window exactly and no line reaches the last column", arguments: [
        (80, 24), (60, 20), (48, 11), (100, 40), (40, 12), (47, 30), (80, 10), (20, 3), (1, 1),
    ])
    func fits(_ columns: Int, _ rows: Int) {
        for value in ["", "alice", String(repeating: "x", count: 200)] {
            let frame = Self.screen(value: value).render(columns: columns, rows: rows)
            #expect(frame.lines.count == rows)
            #expect(frame.lines.allSatisfy { FormScreen.plain($0).count < max(columns, 1) })
            if let cursor = frame.cursor {
                #expect(cursor.row < rows && cursor.column < columns - 1)
                #expect(FormScreen.plain(frame.lines[cursor.row]).contains("›"))
            }
        }
    }

    @Test("layouts by size: roomy, compact, too small; hints and the session id always shown")
    func layouts() {
        let screen = Self.screen()
        let roomy = screen.render(columns: 80, rows: 24).lines.map(FormScreen.plain)
        #expect(roomy.contains { $0.contains("Tab/↑/↓ move") && $0.contains("Esc quit") })
        #expect(roomy.contains { $0.contains("session 0123456789abcdef") })
        let compact = screen.render(columns: 60, rows: 20).lines.map(FormScreen.plain)
        #expect(compact.contains { $0.contains("Esc quit") })
        #expect(compact.contains { $0.contains("session 0123456789abcdef") })
        #expect(compact.contains { $0.contains("› Username") && $0.hasSuffix("alice") })
        let small = screen.render(columns: 40, rows: 12)
        #expect(small.tooSmall)
        #expect(small.cursor == nil ? true : false)
        let notice = small.lines.map(FormScreen.plain).filter { !$0.isEmpty }
        #expect(notice.first?.hasPrefix("Esc quits.") == true, "\(notice)")
        #expect(notice.joined(separator: " ") == "Esc quits. Terminal too small (40×12); need 48×\(screen.compactRows).", "the whole notice, wrapped at spaces: \(notice)")
    }

    @Test("the hints say what Ctrl-U does; after a successful submit the form says it is done")
    func finishedState() {
        var screen = Self.screen()
        let editing = screen.render(columns: 80, rows: 24).lines.map(FormScreen.plain)
        #expect(editing.contains { $0.contains("Ctrl-U del to start") && $0.contains("Esc quit") })
        #expect(!editing.contains { $0.contains("Ctrl-U clear") })
        screen.view.result = SessionView.Result(ok: true, message: "Logged in", user: "alice", token: nil)
        for size in [(80, 24), (60, 20)] {
            let done = screen.render(columns: size.0, rows: size.1).lines.map(FormScreen.plain)
            #expect(done.contains { $0.contains("any key exits") }, "\(size)")
            #expect(!done.contains { $0.contains("Enter submit") || $0.contains("(disabled)") }, "\(size)")
        }
    }

    @Test("the cursor goes after wide characters by display width", arguments: [
        ("用户", 4), ("👍🏽x", 3), ("e\u{301}", 1), ("👨‍👩‍👧", 2), ("ｗ", 2), ("ab", 2),
    ])
    func wideCursor(_ value: String, _ columns: Int) {
        for size in [(80, 24), (60, 20)] {
            let frame = Self.screen(value: value).render(columns: size.0, rows: size.1)
            let cursor = try! #require(frame.cursor)
            let line = FormScreen.plain(frame.lines[cursor.row])
            let before = line.hasSuffix(value) ? String(line.dropLast(value.count)) : line
            #expect(cursor.column == DisplayWidth.of(before) + columns, "\(value) at \(size): \(line)")
        }
    }

    @Test("a long run of wide characters scrolls within the window, the cursor in view")
    func wideScroll() {
        for size in [(80, 24), (60, 20), (48, 11)] {
            let frame = Self.screen(value: String(repeating: "用", count: 100)).render(columns: size.0, rows: size.1)
            let cursor = try! #require(frame.cursor)
            #expect(frame.lines.allSatisfy { DisplayWidth.of(FormScreen.plain($0)) < size.0 })
            #expect(cursor.column == DisplayWidth.of(FormScreen.plain(frame.lines[cursor.row])) && cursor.column < size.0 - 1)
        }
    }

    @Test("a long value scrolls so that the cursor stays visible")
    func scrolls() {
        var screen = Self.screen(value: String(repeating: "a", count: 100) + "Z")
        var frame = screen.render(columns: 60, rows: 20)
        let cursor = try! #require(frame.cursor)
        let line = FormScreen.plain(frame.lines[cursor.row])
        #expect(line.contains("Z") && cursor.column == line.count)
        var editor = screen.editors["username"]!
        editor.apply(.home)
        screen.editors["username"] = editor
        frame = screen.render(columns: 60, rows: 20)
        #expect(!FormScreen.plain(frame.lines[frame.cursor!.row]).contains("Z"))
    }
}

@Suite("Argument order and typos")
struct ArgumentNormalizerTests {
    static let verbs = ["signup", "login", "describe", "ping", "verify", "sessions", "monitor", "raw"]

    @Test("shared options before the subcommand move after it", arguments: [
        (["--socket", "/s", "ping"], ["ping", "--socket", "/s"]),
        (["--json", "--socket=/s", "--timeout", "3", "describe", "--x"], ["describe", "--json", "--socket=/s", "--timeout", "3", "--x"]),
        (["verify", "--", "-abc"], ["verify", "--", "-abc"]),
        (["--json", "verify", "--", "-abc"], ["verify", "--json", "--", "-abc"]),
        (["--help"], ["--help"]),
        ([], []),
        (["--generate-completion-script", "bash"], ["--generate-completion-script", "bash"]),
        (["help", "ping"], ["help", "ping"]),
    ])
    func moves(_ input: [String], _ output: [String]) {
        #expect(ArgumentNormalizer.normalize(input, subcommands: Self.verbs) == .arguments(output))
    }

    @Test("an unknown subcommand gets the closest one", arguments: [
        ("pnig", "ping"), ("sigup", "signup"), ("lgoin", "login"), ("sesions", "sessions"), ("descr", "describe"), ("monitr", "monitor"),
    ])
    func suggests(_ typo: String, _ guess: String) {
        guard case .usage(let message) = ArgumentNormalizer.normalize([typo], subcommands: Self.verbs) else {
            Issue.record("\(typo) was accepted")
            return
        }
        #expect(message.contains("did you mean '\(guess)'?"))
    }

    @Test("shared options and no command is a usage error, not an unknown option")
    func noCommand() {
        guard case .usage(let message) = ArgumentNormalizer.normalize(["--json", "--socket", "/s"], subcommands: Self.verbs) else {
            Issue.record("accepted")
            return
        }
        #expect(message.hasPrefix("no command after --json --socket /s"))
    }

    @Test("a shared option short of its value is named, wherever it stands", arguments: [
        (["--socket"], "Missing value for '--socket <path>'"),
        (["--json", "--socket"], "Missing value for '--socket <path>'"),
        (["--json", "--timeout"], "Missing value for '--timeout <seconds>'"),
    ])
    func missingValue(_ input: [String], _ expected: String) {
        #expect(ArgumentNormalizer.normalize(input, subcommands: Self.verbs) == .usage(expected))
    }

    @Test("help on a mistyped command suggests the command")
    func helpTypo() {
        guard case .usage(let message) = ArgumentNormalizer.normalize(["help", "pnig"], subcommands: Self.verbs) else {
            Issue.record("accepted")
            return
        }
        #expect(message.contains("did you mean 'ping'?"))
    }

    @Test("nothing close, no suggestion")
    func noGuess() {
        guard case .usage(let message) = ArgumentNormalizer.normalize(["frobnicate"], subcommands: Self.verbs) else {
            Issue.record("accepted")
            return
        }
        #expect(!message.contains("did you mean"))
    }
}

@Suite("The user's locale from POSIX variables")
struct UserLocaleTests {
    @Test("POSIX locale names become BCP 47 tags; C and POSIX mean none", arguments: [
        ("zh_CN.UTF-8", "zh-CN"), ("zh_CN", "zh-CN"), ("en_GB.UTF-8@euro", "en-GB"), ("fr", "fr"), ("sr_RS@latin", "sr-RS"),
        ("C", nil), ("POSIX", nil), ("C.UTF-8", nil), ("", nil), ("../../etc", nil),
    ] as [(String, String?)])
    func tags(_ posix: String, _ tag: String?) {
        #expect(UserLocale.tag(fromPOSIX: posix) == tag)
    }

    @Test("a token beginning with '-' given to verify or logout is the token, not options (1 in 64 do)")
    func dashedToken() {
        let token = "-8rAaDJ997rlgyi-Wicthzfd3YDVtwIquHujCjXizho"
        for verb in ["verify", "logout"] {
            #expect(ArgumentNormalizer.normalize([verb, token, "--socket", "/s"], subcommands: ArgumentNormalizerTests.verbs + ["logout"]) == .arguments([verb, "--socket", "/s", "--", token]))
            #expect(ArgumentNormalizer.normalize([verb, "-h"], subcommands: ArgumentNormalizerTests.verbs + ["logout"]) == .arguments([verb, "-h"]), "a short option stays one")
        }
        #expect(ArgumentNormalizer.normalize(["ping", token], subcommands: ArgumentNormalizerTests.verbs) == .arguments(["ping", token]), "other commands take no token")
    }

}
