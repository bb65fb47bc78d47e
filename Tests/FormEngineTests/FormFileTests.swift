import Foundation
import BuiltinForms
@testable import FormEngine
import SignupProtocol
import Testing

@Suite("Form and message files")
struct FormFileTests {
    private let head = "[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n"
    private let user = "[field user]\nkind = username\nlabel = User\nrule = username\n"
    private let pw = "[field pw]\nkind = secret\nlabel = Password\nrule = max-bytes 100\n"

    @Test("a field depends on exactly the fields its rules read: dependsOn agrees with dependencies")
    func dependencies() {
        for form in [FormDefinition.signup, .login, .phoneSignup, .phoneLogin] {
            for field in form.fields {
                for other in form.fields {
                    #expect(field.dependsOn(other.name) == field.dependencies.contains(other.name), "\(form.name).\(field.name) on \(other.name)")
                }
            }
        }
        let repeated = FormDefinition.signup.fields.first { $0.name == "repeatedPassword" }
        #expect(repeated?.dependsOn("password") == true)
        #expect(repeated?.dependsOn("username") == false)
    }

    @Test("the form's plan agrees with its fields, after a change of them and after a round trip through JSON")
    func plan() throws {
        func expectAgrees(_ form: FormDefinition, _ label: String) {
            #expect(form.plan.count == form.fields.count, "\(label)")
            for (changed, field) in form.fields.enumerated() {
                let plan = form.plan[changed]
                #expect(plan.revalidates == form.fields.indices.filter { $0 == changed || form.fields[$0].dependsOn(field.name) }, "\(label).\(field.name)")
                #expect(plan.checksAvailability == field.checksAvailability && plan.checksQuality == field.checksQuality, "\(label).\(field.name)")
            }
        }
        for form in [FormDefinition.signup, .login, .phoneSignup, .phoneLogin] {
            expectAgrees(form, form.name)
            let decoded = try JSONDecoder().decode(FormDefinition.self, from: JSONEncoder().encode(form))
            #expect(decoded == form)
            expectAgrees(decoded, "decoded \(form.name)")
        }
        let signup = FormDefinition.signup
        let password = try #require(signup.fields.firstIndex { $0.name == "password" })
        let repeated = try #require(signup.fields.firstIndex { $0.name == "repeatedPassword" })
        #expect(signup.plan[password].revalidates == [password, repeated])
        // The repeated password no longer reads the password: a change of it revalidates only itself.
        var changed = signup
        changed.fields[repeated].rules = [RuleSpec(.minLength(1))]
        #expect(changed.plan[password].revalidates == [password])
        expectAgrees(changed, "changed")
    }

    @Test("a minimal form reads, with its identity and secret")
    func minimal() throws {
        let form = try FormFile.parse(head + user + pw, file: "f.form")
        #expect(form.name == "f" && form.fields.map(\.name) == ["user", "pw"])
        #expect(form.identityKind == .username && form.secretField == 1 && form.action == .signup)
        #expect(form.fields[0].labels.text(for: "zh-CN") == "User")
    }

    @Test("each problem is reported at its line and column", arguments: [
        ("[form\n", "f.form:1:5: a section header must end with \"]\""),
        ("[form]\nname = f\n[field a]\nkind = text\nlabel = A\n[field a]\n", "f.form:6:8: duplicate field \"a\" (first defined on line 3)"),
        ("[form]\n  name = f\n  name = g\n", "f.form:3:3: \"name\" set twice (first on line 2)"),
        ("[widget]\n", "f.form:1:2: unknown section [widget]; known: [form], [field NAME]"),
        ("name = f\n", "f.form:1:1: \"name\" outside any section; start with [form]"),
        ("[form]\nname = F!\naction = login\nidentity = u\nsecret = p\nsubmit = x\n[field u]\nkind = text\nlabel = U\n", "f.form:2:8: form name \"F!\""),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\n",
         "f.form:4:12: the identity field \"user\" needs \"rule = username\""),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = phone 11\n",
         "f.form:15:8: rule phone needs kind = phone"),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = min-length 6 as Not.An.Id\n",
         "f.form:15:24: message id \"Not.An.Id\""),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = available\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\n",
         "f.form:10:8: available must be the last rule"),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = phone 12 11\n",
         "f.form:15:14: phone: MIN-DIGITS 12 is more than MAX-DIGITS 11"),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = equals pw\n",
         "f.form:15:15: a field cannot be compared with itself"),
        // At the unknown field's name (helper-49: at the rule's).
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = not-containing  nosuch\n",
         "f.form:15:24: unknown field \"nosuch\" in rule; fields: user, pw"),
        // A rule that is only its message, or nothing: refused, not a crash (found by the fuzzer).
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule = as password.short\n",
         "f.form:15:8: a rule names what it checks before \"as\""),
        // The same with an id no catalogue has: the missing rule is said first, at its `as`.
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule =    as    custom.x\n",
         "f.form:15:11: a rule names what it checks before \"as\""),
        ("[form]\nname = f\naction = signup\nidentity = user\nsecret = pw\nsubmit = Go\n[field user]\nkind = username\nlabel = User\nrule = username\n[field pw]\nkind = secret\nlabel = P\nrule = max-bytes 9\nrule =\n",
         "f.form:15:"),
    ])
    func located(_ text: String, _ expected: String) {
        do {
            _ = try FormFile.parse(text, file: "f.form", knowsMessage: { MessageCatalogues.builtin.knows($0) })
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }

    @Test("message files: {name} parameters are substituted; unknown or unclosed ones are refused at load")
    func messages() throws {
        let catalogue = try MessageFile.parse("a.b = at most {max} of {field}\n", locale: "fr", file: "fr.messages")
        var catalogues = MessageCatalogues.builtin
        catalogues.merge(catalogue)
        let text = catalogues.render(MessageRef("a.b", [.init("max", .integer(3)), .init("field", .string("x"))]), locale: "fr").text
        #expect(text == "at most 3 of x")
        #expect(throws: ConfigError(file: "de.messages", line: 1, column: 26, message: "\"password.short\": unknown parameter {mni}; its parameters: {field}, {max}, {min}")) {
            try MessageFile.parse("password.short = Zu kurz {mni}\n", locale: "de", file: "de.messages")
        }
        #expect(throws: ConfigError.self) { try MessageFile.parse("password.short = Zu kurz {min\n", locale: "de", file: "de.messages") }
        // Every fault of a line, each at its column; an unclosed brace ends the line's check.
        guard case .failure(let faults) = MessageFile.parseAll("password.short = {mni} } {min} {mx} {max\n", locale: "de", file: "de.messages") else {
            Issue.record("a text with four faults was taken")
            return
        }
        #expect(faults.errors.map(\.column) == [18, 24, 32, 37])
        #expect(faults.errors.map(\.message) == [
            "\"password.short\": unknown parameter {mni}; its parameters: {field}, {max}, {min}",
            "\"password.short\": \"}\" without \"{\"",
            "\"password.short\": unknown parameter {mx}; its parameters: {field}, {max}, {min}",
            "\"password.short\": unclosed \"{\"",
        ])
        #expect(throws: ConfigError.self) { try MessageFile.parse("login.done = Hallo {min}\n", locale: "de", file: "de.messages") }
        #expect(catalogues.render(MessageRef("login.done"), locale: "fr").text == "Logged in")  // falls back to English
        #expect(throws: ConfigError.self) { try MessageFile.parse("x = y\n", locale: "not a tag", file: "x.messages") }
    }

    /// The built-in catalogues are read at every start without the placeholder check (issue
    /// 29); this is that check, as an operator's file of the same texts gets it.
    @Test("the built-in catalogues pass every check an operator's message file gets", arguments: BuiltinCatalogues.files.map(\.locale))
    func builtinCataloguesPassTheFullCheck(locale: String) throws {
        let text = try #require(BuiltinCatalogues.files.first { $0.locale == locale }?.text)
        let checked = MessageFile.parseAll(text, locale: locale, file: "\(locale).messages")
        #expect(throws: Never.self) { try checked.get() }
        let unchecked = try MessageFile.parse(text, locale: locale, file: "\(locale).messages", checkingPlaceholders: false)
        #expect(try checked.get() == unchecked)
        // The check is what refuses a bad placeholder: unchecked, the same text is taken.
        let bad = "password.short = Zu kurz {mni}\n"
        #expect(throws: ConfigError.self) { try MessageFile.parse(bad, locale: "de", file: "de.messages") }
        #expect(throws: Never.self) { try MessageFile.parse(bad, locale: "de", file: "de.messages", checkingPlaceholders: false) }
    }

    @Test("substitution works on any text: several scripts, parameters at either end, a brace before a combining mark, unknown and unclosed braces kept")
    func substitution() {
        let params: [LocalizedMessage.Parameter] = [.init("max", .integer(12)), .init("field", .string("密码"))]
        #expect(MessageCatalogues.substitute("{field}不能超过{max}个字符", params) == "密码不能超过12个字符")
        #expect(MessageCatalogues.substitute("höchstens {max}", params) == "höchstens 12")
        #expect(MessageCatalogues.substitute("{max}{max}", params) == "1212")
        #expect(MessageCatalogues.substitute("no braces at all", params) == "no braces at all")
        #expect(MessageCatalogues.substitute("é{unknown}é {max", params) == "é{unknown}é {max")
        #expect(MessageCatalogues.substitute("{\u{301}max}\u{301} {max}", params) == "{\u{301}max}\u{301} 12")
        #expect(MessageCatalogues.substitute("}{max}{", params) == "}12{")
        #expect(MessageCatalogues.substitute("", params) == "")
    }

    @Test("a locale is found whatever its case")
    func localeCase() throws {
        var catalogues = MessageCatalogues.builtin
        catalogues.merge(try MessageFile.parse("login.done = Angemeldet\n", locale: "de-AT", file: "de-AT.messages"))
        #expect(catalogues.render(MessageRef("login.done"), locale: "de-AT").text == "Angemeldet")
        #expect(catalogues.render(MessageRef("login.done"), locale: "de-at").text == "Angemeldet")
        #expect(catalogues.render(MessageRef("login.done"), locale: "en").text == "Logged in")
    }

    @Test("the password-quality rule asks its shell to check, told the user field; the verdict maps to its id; stale answers are dropped")
    func passwordQuality() throws {
        let form = try FormFile.parse(head + user + pw + "rule = password-quality user\n", file: "f.form")
        var session = FormSession(form: form)
        _ = try session.handle(.set(field: "user", value: "bob"), now: .zero)
        let first = try session.handle(.set(field: "pw", value: "hunter2"), now: .zero)
        #expect(first.effects == [.checkPassword(id: 1, password: "hunter2", user: "bob")])
        #expect(first.events.first?.textOnly == .validation(field: "pw", state: .validating, message: "Checking the password"))
        #expect(session.hasPendingCheck)
        // A new user name re-checks the password against it; the first answer is stale.
        let renamed = try session.handle(.set(field: "user", value: "hunter"), now: .zero)
        #expect(renamed.effects == [.checkPassword(id: 2, password: "hunter2", user: "hunter")])
        #expect(try session.handle(.passwordChecked(check: 1, nil), now: .zero) == FormStep())
        let answer = try session.handle(.passwordChecked(check: 2, PasswordQualityFailure(.containsUser)), now: .zero)
        #expect(answer.events == [.validation(field: "pw", state: .failed, message: LocalizedMessage(id: "password.quality.contains_user", text: "Password contains the user name"))])
        #expect(!session.hasPendingCheck && !session.enabled)
        let good = try session.handle(.set(field: "pw", value: "a long passphrase"), now: .zero)
        _ = try session.handle(.passwordChecked(check: 3, nil), now: .zero)
        #expect(good.effects == [.checkPassword(id: 3, password: "a long passphrase", user: "hunter")])
        #expect(session.shown(1) == Shown(.ok, "Password valid"))
        #expect(session.enabled)
        #expect(throws: ConfigError.self) { try FormFile.parse(head + user + pw + "rule = password-quality\nrule = min-length 3\n", file: "f.form") }
    }

    @Test("every form README shows is one the check accepts, as it is written (helper-48: its comments after values were not)")
    func readmeForms() throws {
        let readme = try String(contentsOf: SourceTree.root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```ini\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        let forms = blocks.filter { $0.hasPrefix("[form]") }
        #expect(!forms.isEmpty)
        for text in forms {
            do {
                let form = try FormFile.parse(text, file: "README.form", knowsMessage: { MessageCatalogues.builtin.knows($0) })
                #expect(!form.fields.isEmpty)
            } catch {
                Issue.record("README's form is refused: \(error.description)")
            }
        }
    }

    @Test("the engine's sources name no form and no field: every built-in one comes from data")
    func engineHasNoNames() throws {
        let directory = SourceTree.root
            .appendingPathComponent("Sources/FormEngine")
        // Kinds, rule names and message-id prefixes are the format's vocabulary, and some
        // built-in fields are named like them ("username", "phone", "password"); those
        // are checked by behaviour below (renamedFormBehavesTheSame).
        let vocabulary = Set(FieldKind.allCases.flatMap { [$0.rawValue, $0.messagePrefix] } + FormFile.ruleNames + SubmitAction.allCases.map(\.rawValue))
        let names = Set(FormLibrary.builtin.forms.flatMap { [$0.name] + $0.fields.map(\.name) }).subtracting(vocabulary)
        #expect(names.isSuperset(of: ["phone-signup", "phone-login", "repeatedPassword"]))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 5)
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for name in names {
                #expect(!text.contains("\"\(name)\""), "Sources/FormEngine/\(file) names \"\(name)\"")
            }
        }
    }
}

extension FormFileTests {
    @Test("a built-in form with every name changed behaves the same: the engine keys on the definition only")
    func renamedFormBehavesTheSame() throws {
        let source = FormLibrary.builtin.form(named: "signup")!
        var renamed = source
        renamed.name = "zzz"
        for index in renamed.fields.indices { renamed.fields[index].name = "f\(index)" }
        renamed.fields[2].rules = [RuleSpec(.equals(field: "f1"))]
        let inputs = [("username", "bad_name"), ("username", "alice"), ("password", "abc"), ("repeatedPassword", "abd"), ("password", "abd12"), ("repeatedPassword", "abd12")]
        var original = FormSession(form: source), copy = FormSession(form: renamed)
        for (field, value) in inputs {
            let a = try original.handle(.set(field: field, value: value), now: .zero)
            let b = try copy.handle(.set(field: "f\(source.index(of: field)!)", value: value), now: .zero)
            #expect(a.effects == b.effects)
            #expect(a.events.map(\.withoutField) == b.events.map(\.withoutField))
        }
        _ = try original.handle(.availability(check: 1, .available), now: .zero)
        _ = try copy.handle(.availability(check: 1, .available), now: .zero)
        #expect(original.enabled && copy.enabled)
        #expect(try original.handle(.submit, now: .zero).effects == copy.handle(.submit, now: .zero).effects)
    }
}

extension SessionEvent {
    fileprivate var withoutField: SessionEvent {
        if case .validation(_, let state, var message) = self {
            message.params.removeAll { $0.name == "field" }  // names the compared field: data too
            message.text = ""
            return .validation(field: "", state: state, message: message)
        }
        return self
    }
}

