import FormEngine
import SignupProtocol
import BuiltinForms
import Testing

/// The issue 14 follow-up: what a tester who knew only README and PROTOCOL.md found.
@Suite("Forms and messages, fresh-eyes fixes")
struct FreshEyesFormTests {
    private let head = "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n"
    private let pw = "[field pw]\nkind = secret\nlabel = Password\nrule = max-bytes 100\n"
    private let knows: (String) -> Bool = { MessageCatalogues.builtin.knows($0) }

    @Test("a rule with no prefix-specific id fails with the generic field.* one, which has a text")
    func genericIDs() throws {
        let user = "[field user]\nkind = username\nlabel = User\nrule = min-length 4\nrule = username\n"
        let form = try FormFile.parse(head + user + pw, file: "f.form", knowsMessage: knows)
        var session = FormSession(form: form)
        let step = try session.handle(.set(field: "user", value: "ab"), now: Moment(nanoseconds: 0))
        let messages = step.events.compactMap { event -> LocalizedMessage? in if case .validation(_, _, let message) = event { message } else { nil } }
        #expect(messages.map(\.id) == ["field.too_short"])
        #expect(messages.map(\.text) == ["Must be at least 4 characters"])
    }

    @Test("--check-config refuses a rule whose id (and generic id) no en catalogue has")
    func missingID() {
        let user = "[field user]\nkind = username\nlabel = User\nrule = username\nrule = min-length 4\n"
        let english = { (id: String) in id != "field.too_short" && id != "username.too_short" && MessageCatalogues.builtin.knows(id) }
        #expect(throws: ConfigError.self) { try FormFile.parse(head + user + pw, file: "f.form", knowsMessage: english) }
    }

    @Test("every error of a file, in file order")
    func everyError() {
        let text = "[form]\nname = f\naction = sideways\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\nrule = bogus\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 100\nrule = min-length x\n"
        guard case .failure(let errors) = FormFile.parseAll(text, file: "f.form") else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.map(\.line) == [3, 11, 16])
    }

    @Test("CRLF line ends and a UTF-8 byte-order mark are accepted")
    func crlfAndBOM() throws {
        let user = "[field user]\nkind = username\nlabel = User\nrule = username\n"
        let text = "\u{FEFF}" + (head + user + pw).replacing("\n", with: "\r\n")
        let form = try FormFile.parse(text, file: "f.form")
        #expect(form.name == "f" && form.fields.count == 2)
    }

    @Test("a missing identity is reported as such, not as an availability error")
    func missingIdentity() {
        let text = "[form]\nname = f\naction = signup\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\nrule = available\n" + pw
        guard case .failure(let errors) = FormFile.parseAll(text, file: "f.form") else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.map(\.message) == ["[form] needs \"identity = ...\""])
    }

    @Test("rule = ... as ID refuses success and result ids")
    func asSuccess() {
        let user = "[field user]\nkind = username\nlabel = User\nrule = username\n"
        for id in ["login.done", "password.valid", "username.checking", "username.taken"] {
            #expect(throws: ConfigError.self) { try FormFile.parse(head + user + pw + "rule = min-length 6 as \(id)\n", file: "f.form", knowsMessage: knows) }
        }
        #expect(throws: Never.self) { try FormFile.parse(head + user + pw + "rule = min-length 6 as password.short\n", file: "f.form", knowsMessage: knows) }
    }

    @Test("a built-in form cannot be replaced by one with another action")
    func overrideAction() {
        let text = "[form]\nname = login\naction = signup\nidentity = username\nsecret = password\nsubmit = Go\n[field username]\nkind = username\nlabel = User\nrule = username\n[field password]\nkind = secret\nlabel = P\nrule = max-bytes 100\n"
        guard case .failure(let errors) = FormLibrary.load(formFiles: [.init(path: "login.form", text: text)]) else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.count == 1 && errors.errors[0].message.contains("action = login"))
        // At the name (helper-49: at the `[form]` line), here and for a name used twice.
        #expect(errors.errors.first.map { ($0.line, $0.column) } ?? (0, 0) == (2, 8))
        let other = text.replacing("name = login", with: "# a copy\nname  =  twice").replacing("action = signup", with: "action = login")
        guard case .failure(let twice) = FormLibrary.load(formFiles: [.init(path: "a.form", text: other), .init(path: "b.form", text: other)]) else {
            Issue.record("the same name in two files was accepted")
            return
        }
        #expect(twice.errors.map(\.description) == ["b.form:3:10: form \"twice\" is also defined in a.form"])
    }

    @Test("one bad line of the English catalogue is its own error, not one more in each form naming its other ids (helper-48)")
    func catalogueErrorsStayInTheirFile() {
        let form = FormLibrary.SourceFile(
            path: "d/f.form",
            text: "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n"
                + "[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 99\nrule = min-length 5 as custom.short\n")
        let english = FormLibrary.SourceFile(path: "m/en.messages", text: "custom.short = Too \"short\": need {min}\ncustom.bad = Hi {nope}\n")
        guard case .failure(let errors) = FormLibrary.load(formFiles: [form], messageFiles: [english]) else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.map(\.file) == ["m/en.messages"], "\(errors.errors.map(\.description))")
        // An id only another language's refused catalogue gives is still unknown to forms.
        let chinese = FormLibrary.SourceFile(path: "m/zh-CN.messages", text: "custom.short = 太短\ncustom.bad = {nope}\n")
        guard case .failure(let both) = FormLibrary.load(formFiles: [form], messageFiles: [chinese]) else {
            Issue.record("accepted")
            return
        }
        #expect(Set(both.errors.map(\.file)) == ["m/zh-CN.messages", "d/f.form"], "\(both.errors.map(\.description))")
    }

    @Test("an `as` message using what its rule does not send with every failure is a warning, in every locale; the form loads (helper-49)")
    func asMessagePlaceholders() throws {
        let head = "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n"
        // The warnings of a library that loads (a form that loaded before this check must
        // still load: an upgrade must not stop a start, nor refuse its last good copy).
        let pw = "[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 99\n"
        func warnings(_ rule: String, _ messages: [FormLibrary.SourceFile] = [], field: String? = nil) throws -> [ConfigError] {
            let form = FormLibrary.SourceFile(path: "d/f.form", text: head + (field.map { $0 + rule + "\n" + pw } ?? pw + rule + "\n"))
            // (Not those for the catalogue's other ids, which this form does not use.)
            return try FormLibrary.load(formFiles: [form], messageFiles: messages).get().warnings.filter { !$0.message.contains("no form and no rule sends") }
        }
        // The built-in text of username.too_long says "at most {max}": min-length sends {min}.
        let tooLong = try warnings("rule = min-length 3 as username.too_long").map(\.description)
        #expect(tooLong == [
            "d/f.form:15:24: warning: \"username.too_long\" uses {max} (its en, zh-CN texts), which this rule does not send (it sends {min}); users see it as written"
        ], "\(tooLong)")
        #expect(try warnings("rule = max-length 30 as username.too_long").isEmpty)
        // An operator's text, in one locale of two.
        let english = FormLibrary.SourceFile(path: "m/en.messages", text: "custom.nick = Too short (min. {min})\n")
        let german = FormLibrary.SourceFile(path: "m/de.messages", text: "custom.nick = Zu lang (max. {max})\n")
        #expect(try warnings("rule = min-length 2 as custom.nick", [english]).isEmpty)
        #expect(try warnings("rule = min-length 2 as custom.nick", [english, german]).map(\.message) == [
            "warning: \"custom.nick\" uses {max} (its de text), which this rule does not send (it sends {min}); users see it as written"
        ])
        // A rule whose failures send different parameters: only those all of them send.
        let user = FormLibrary.SourceFile(path: "m/en.messages", text: "custom.nick = Bad name (max. {max})\ncustom.plain = Bad name\n")
        let nick = "[field nick]\nkind = username\nlabel = Nick\n"
        #expect(try warnings("rule = username as custom.nick", [user], field: nick).map(\.message) == [
            "warning: \"custom.nick\" uses {max} (its en text), which this rule does not send (it sends none); users see it as written"
        ])
        #expect(try warnings("rule = username as custom.plain", [user], field: nick).isEmpty)
        // An `ok =` message is sent with none; a failure's message as `ok =` says the wrong thing
        // (helper-50).
        let fine = FormLibrary.SourceFile(path: "m/en.messages", text: "custom.fine = Fine ({min} reached)\n")
        #expect(try warnings("ok = custom.fine", [fine]).map(\.description) == [
            "d/f.form:15:6: warning: \"custom.fine\" uses {min} (its en text), which an ok message does not send (it sends none); users see it as written"
        ])
        #expect(try warnings("ok = password.too_short").map(\.message) == [
            "warning: \"password.too_short\" uses {min} (its en, zh-CN texts), which an ok message does not send (it sends none); users see it as written",
            "warning: \"password.too_short\" is a rule's failure message; as ok = it is shown for a value that passes",
        ])
        // The built-in forms use none.
        for (name, text) in BuiltinForms.files {
            let (_, builtin) = FormFile.parseAllWithWarnings(text, file: name, placeholderUses: MessageCatalogues.builtin.placeholderUses)
            #expect(builtin.isEmpty, "\(name): \(builtin)")
        }
    }

    @Test("a catalogue id nothing sends is a warning at its line: a typo of a built-in id, or one no form names (helper-49)")
    func unusedCatalogueIDs() throws {
        let form = FormLibrary.SourceFile(
            path: "d/f.form",
            text: "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n"
                + "[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 99\nrule = min-length 5 as custom.short\n")
        let german = FormLibrary.SourceFile(
            path: "m/de.messages",
            text: "custom.short = Zu kurz\nlogin.done = Angemeldet\nemail.too_short = Zu kurz\n  pasword.acceptable = Gut\ncustom.never = Nie\n")
        let english = FormLibrary.SourceFile(path: "m/en.messages", text: "custom.short = Too short\n")
        let library = try FormLibrary.load(formFiles: [form], messageFiles: [english, german]).get()
        #expect(library.warnings.map(\.description) == [
            "m/de.messages:4:3: warning: no form and no rule sends \"pasword.acceptable\" (a typo of a built-in id, or one for an `as` or `ok =` still to come)",
            "m/de.messages:5:1: warning: no form and no rule sends \"custom.never\" (a typo of a built-in id, or one for an `as` or `ok =` still to come)",
        ])
    }

    @Test("a wrong kind or an empty label is one error, not a second one for its absence (helper-50)")
    func wrongKindOnce() {
        let head = "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n"
        let pw = "[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 99\n"
        for (user, expected) in [
            ("[field user]\nkind = usrname\nlabel = User\nrule = username\n", "f.form:8:8: unknown kind \"usrname\""),
            ("[field user]\nkind = username\nlabel =\nrule = username\n", "f.form:9:8: \"label\" needs a value"),
        ] {
            guard case .failure(let errors) = FormFile.parseAll(head + user + pw, file: "f.form") else {
                Issue.record("accepted: \(user)")
                continue
            }
            #expect(errors.errors.count == 1 && errors.errors[0].description.hasPrefix(expected), "\(errors.errors.map(\.description))")
        }
    }

    @Test("two catalogues of one locale are one error, not one more in each form naming their ids (helper-49)")
    func sameLocaleTwice() {
        let form = FormLibrary.SourceFile(
            path: "d/f.form",
            text: "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n"
                + "[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 99\nrule = min-length 5 as custom.short\n")
        let files: [FormLibrary.SourceFile] = [.init(path: "m/EN.messages", text: "login.done = Hi\n"), .init(path: "m/en.messages", text: "custom.short = Too short\n")]
        guard case .failure(let errors) = FormLibrary.load(formFiles: [form], messageFiles: files) else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.map(\.description) == ["m/en.messages:1:1: the same locale as m/EN.messages; keep one of the two files"])
    }

    @Test("Traditional Chinese tags are not served the Simplified catalogue; zh_CN and zh-CN conflict")
    func traditional() {
        let catalogues = MessageCatalogues.builtin
        #expect(catalogues.resolve("zh-TW") == "en")
        #expect(catalogues.resolve("zh-Hant-TW") == "en")
        #expect(catalogues.resolve("zh-HK") == "en")
        #expect(catalogues.resolve("zh") == "zh-CN")
        #expect(catalogues.resolve("zh-Hans-SG") == "zh-CN")
        let files: [FormLibrary.SourceFile] = [.init(path: "d/zh-CN.messages", text: "login.done = A\n"), .init(path: "d/zh_CN.messages", text: "login.done = B\n")]
        guard case .failure(let errors) = FormLibrary.load(messageFiles: files) else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.count == 1)
    }
}
