import SignupClient

#if canImport(Glibc)
import Glibc
#endif

/// `signup-example --socket PATH --username U --password P`: fills signupd's signup form
/// through `SignupForm`, prints each output as it changes (one line per change), waits for
/// submit to be enabled, submits and prints the result. Exit 0 on success, 1 when refused
/// (2 for bad usage or when signupd cannot be reached).
@main
enum SignupExample {
    static func main() async {
        var options: [String: String] = [:]
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst(), let value = arguments.popFirst() { options[flag] = value }
        guard let username = options["--username"], let password = options["--password"] else {
            print("usage: signup-example [--socket PATH] --username U --password P")
            exit(2)
        }
        do {
            exit(try await signUp(socket: options["--socket"] ?? SocketPath.default, username: username, password: password) ? 0 : 1)
        } catch {
            print("signup-example: \(error) (\(error.code))")
            exit(2)
        }
    }

    // The core, as README's "Use it from Swift" shows it.
    static func signUp(socket: String, username: String, password: String) async throws(SignupClientError) -> Bool {
        let form = try await SignupForm.open("signup", socket: socket)
        let changes = form.changes()
        try await form.set("username", to: username)
        try await form.set("password", to: password)
        try await form.set("repeatedPassword", to: password)
        try await form.settle()  // all three values are in
        for await change in changes {
            switch change.kind {
            case .validation(let v):
                print("\(v.field): \(v.state) \(v.message)")
                if v.state == .failed { await form.close(); return false }  // every value is in: final
            case .enabled(let enabled):
                print("enabled: \(enabled)")
                if enabled { try await form.submit() }
            case .busy(let busy): print("busy: \(busy)")
            case .result(let result):
                print("result: \(result.ok ? "ok" : "refused") \(result.message)")
                await form.close()
                return result.ok
            case .locale, .closed: break
            }
        }
        return false  // the form ended without a result
    }
}
