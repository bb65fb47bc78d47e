import Logging
import NIOHTTP1
import SignupClient
import SignupProtocol

/// The bridge's routes: the pages (GET draws a form, POST is the no-script path), the
/// login cookie (`/session`, `/whoami`, `/logout`) and the static files. The WebSocket is
/// `WebSocketRelay`'s.
struct WebApp: Sendable {
    let configuration: WebConfiguration
    let catalog: FormCatalog
    let claims: LoginClaims
    let logger: Logger
    private let renderer = PageRenderer()

    init(configuration: WebConfiguration, claims: LoginClaims, logger: Logger) {
        self.configuration = configuration
        catalog = FormCatalog(socketPath: configuration.socketPath)
        self.claims = claims
        self.logger = logger
    }

    func respond(to request: WebRequest) async -> WebResponse {
        if request.method == .POST, !configuration.origins.allowsPost(request.headers, https: request.origin.https || configuration.alwaysSecureCookies) {
            return WebResponse(.forbidden, text: "a form of another site cannot post here")
        }
        switch (request.method, request.path) {
        case (.GET, "/static/app.js"): return WebResponse(.ok, type: "text/javascript; charset=utf-8", body: PackageResources.app_js, headers: [("Cache-Control", "no-cache")])
        case (.GET, "/static/app.css"): return WebResponse(.ok, type: "text/css; charset=utf-8", body: PackageResources.app_css, headers: [("Cache-Control", "no-cache")])
        case (.GET, "/whoami"): return await whoami(request)
        case (.POST, "/session"): return await session(request)
        case (.POST, "/logout"): return await logout(request)
        case (.GET, "/ws"): return WebServer.refusedUpgrade
        default: break
        }
        guard let form = Self.formName(of: request.path) else { return WebResponse(.notFound, text: "not found") }
        switch request.method {
        case .GET, .HEAD: return await page(form, request)
        case .POST: return await post(form, request)
        default: return WebResponse(.methodNotAllowed, text: "method not allowed")
        }
    }

    /// The form a path names: `/` is the sign-up form.
    static func formName(of path: String) -> String? {
        if path == "/" { return "signup" }
        let name = path.dropFirst()
        guard path.hasPrefix("/"), !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "-" }) else { return nil }
        return String(name)
    }

    // MARK: Pages

    private struct Visitor {
        let names: BrowserFlow.CookieNames
        let flow: BrowserFlow
        let csrf: String
        let newCSRF: Bool
        let locale: String
        let secure: Bool
        /// The login token's cookie, if the browser sent one.
        let token: String?

        init(_ request: WebRequest, alwaysSecure: Bool) {
            let cookies = request.cookies
            secure = alwaysSecure || request.origin.https
            names = BrowserFlow.CookieNames(secure: secure)
            flow = BrowserFlow(cookies: cookies, address: request.origin.address, names: names)
            (csrf, newCSRF) = Secrets.kept(cookies[names.csrf])
            token = cookies[names.token].flatMap { $0.isEmpty ? nil : $0 }
            locale = LocaleChoice.choose(query: request.query["lang"], cookie: cookies[BrowserFlow.localeCookie], acceptLanguage: request.headers.first(name: "Accept-Language"))
        }

        /// The cookies an answer sets: the flow and CSRF cookies when new, the language when asked for.
        func cookies(_ request: WebRequest) -> [(String, String)] {
            var set: [(String, String)] = []
            if flow.isNew { set.append(("Set-Cookie", Cookies.set(names.flow, flow.id, secure: secure))) }
            if newCSRF { set.append(("Set-Cookie", Cookies.set(names.csrf, csrf, secure: secure))) }
            if let asked = request.query["lang"], LocaleChoice.offered(asked) != nil {
                // Read by the page's script too (the switcher keeps it): not HttpOnly, and not secret.
                set.append(("Set-Cookie", Cookies.set(BrowserFlow.localeCookie, locale, secure: secure, httpOnly: false, sameSite: "Lax", maxAge: 31_536_000)))
            }
            return set
        }
    }

    private func page(_ name: String, _ request: WebRequest) async -> WebResponse {
        let visitor = Visitor(request, alwaysSecure: configuration.alwaysSecureCookies)
        let forms: [FormDescription]
        do {
            forms = try await catalog.forms(locale: visitor.locale)
        } catch {
            logger.warning("signupd is not reachable", metadata: ["error": "\(error)"])
            return unavailablePage(visitor, request)
        }
        guard let form = forms.first(where: { $0.name == name }) else { return WebResponse(.notFound, text: "no form \(name)") }
        let user = await signedInUser(visitor)
        let html = renderer.render(.init(form: form, forms: navigation(forms), locale: visitor.locale, csrf: visitor.csrf, signedIn: user))
        return .html(html, headers: visitor.cookies(request))
    }

    private func post(_ name: String, _ request: WebRequest) async -> WebResponse {
        let visitor = Visitor(request, alwaysSecure: configuration.alwaysSecureCookies)
        guard let fields = request.formFields, let csrf = fields["csrf"], !visitor.newCSRF, Secrets.equal(csrf, visitor.csrf) else {
            return WebResponse(.forbidden, text: UIText.of(visitor.locale).badRequest)
        }
        let forms: [FormDescription]
        do {
            forms = try await catalog.forms(locale: visitor.locale)
        } catch {
            return unavailablePage(visitor, request)
        }
        guard let form = forms.first(where: { $0.name == name }) else { return WebResponse(.notFound, text: "no form \(name)") }
        var content = PageRenderer.Content(form: form, forms: navigation(forms), locale: visitor.locale, csrf: visitor.csrf, values: fields)
        var headers = visitor.cookies(request)
        do {
            let outcome = try await NoScriptSubmit(socketPath: configuration.socketPath, timeout: configuration.submitTimeout)
                .run(form: name, values: fields, locale: visitor.locale, client: visitor.flow.client)
            content.validations = outcome.state.fields
            content.result = outcome.result
            if let result = outcome.result, result.ok, let token = result.token {
                headers.append(("Set-Cookie", Cookies.set(visitor.names.token, token, secure: visitor.secure)))
                content.signedIn = result.user
            } else {
                content.signedIn = await signedInUser(visitor)
            }
        } catch {
            logger.warning("a form POST could not be completed", metadata: ["form": "\(name)", "error": "\(error)"])
            content.notice = UIText.of(visitor.locale).unavailable
        }
        let failed = content.result.map { !$0.ok } ?? (content.notice != nil || content.validations.values.contains { $0.state != .ok })
        return .html(renderer.render(content), status: failed ? .unprocessableEntity : .ok, headers: headers)
    }

    private func unavailablePage(_ visitor: Visitor, _ request: WebRequest) -> WebResponse {
        let text = UIText.of(visitor.locale)
        let html = """
            <!doctype html>
            <html lang="\(visitor.locale)"><head><meta charset="utf-8"><title>signupd</title><link rel="stylesheet" href="/static/app.css"></head>
            <body><main><p class="notice" role="alert">\(escape(text.unavailable))</p></main></body></html>
            """
        return .html(html, status: .serviceUnavailable, headers: visitor.cookies(request))
    }

    private func navigation(_ forms: [FormDescription]) -> [(name: String, title: String)] {
        forms.map { ($0.name, $0.title ?? $0.submitLabel) }
    }

    // MARK: The login cookie

    /// The user the token cookie stands for, checked with signupd; nil without one.
    private func signedInUser(_ visitor: Visitor) async -> String? {
        guard let token = visitor.token else { return nil }
        do {
            let connection = try await SignupConnection.connect(to: configuration.socketPath, configuration: .init(speaksFor: visitor.flow.client))
            defer { Task { await connection.close() } }
            return try await connection.verify(token: token)
        } catch {
            return nil
        }
    }

    private func whoami(_ request: WebRequest) async -> WebResponse {
        let visitor = Visitor(request, alwaysSecure: configuration.alwaysSecureCookies)
        guard let token = visitor.token else {
            return .json(#"{"error":"not_signed_in","message":"no login cookie"}"#, status: .unauthorized)
        }
        do {
            let connection = try await SignupConnection.connect(to: configuration.socketPath, configuration: .init(speaksFor: visitor.flow.client))
            defer { Task { await connection.close() } }
            let user = try await connection.verify(token: token)
            return .json(RelayRules.text(JSONObject([.init(key: "user", value: .string(user))])))
        } catch .refused(let refusal) where refusal.code == .known(.invalidToken) {
            return .json(#"{"error":"invalid_token","message":"the login has expired or was revoked"}"#, status: .unauthorized,
                         headers: [("Set-Cookie", Cookies.clear(visitor.names.token, secure: visitor.secure))])
        } catch {
            return .json(#"{"error":"unavailable","message":"signupd is not reachable"}"#, status: .serviceUnavailable)
        }
    }

    /// `POST /session` with `claim` and `csrf`: the page's one-time claim becomes the
    /// `HttpOnly` login cookie.
    private func session(_ request: WebRequest) async -> WebResponse {
        let visitor = Visitor(request, alwaysSecure: configuration.alwaysSecureCookies)
        guard let fields = request.formFields, let csrf = fields["csrf"], !visitor.newCSRF, Secrets.equal(csrf, visitor.csrf) else {
            return .json(#"{"error":"forbidden","message":"missing or wrong CSRF token"}"#, status: .forbidden)
        }
        guard !visitor.flow.isNew, let claim = fields["claim"], let (token, user) = claims.redeem(claim, flow: visitor.flow.id) else {
            return .json(#"{"error":"invalid_claim","message":"unknown, used or expired login claim"}"#, status: .forbidden)
        }
        return .json(RelayRules.text(JSONObject([.init(key: "user", value: .string(user))])),
                     headers: [("Set-Cookie", Cookies.set(visitor.names.token, token, secure: visitor.secure))])
    }

    /// `POST /logout` with `csrf`: signupd revokes the token (on every host), the cookie goes.
    private func logout(_ request: WebRequest) async -> WebResponse {
        let visitor = Visitor(request, alwaysSecure: configuration.alwaysSecureCookies)
        guard let fields = request.formFields, let csrf = fields["csrf"], !visitor.newCSRF, Secrets.equal(csrf, visitor.csrf) else {
            return WebResponse(.forbidden, text: UIText.of(visitor.locale).badRequest)
        }
        let clear = ("Set-Cookie", Cookies.clear(visitor.names.token, secure: visitor.secure))
        if let token = visitor.token {
            do {
                let connection = try await SignupConnection.connect(to: configuration.socketPath, configuration: .init(speaksFor: visitor.flow.client))
                defer { Task { await connection.close() } }
                try await connection.logout(token: token)
            } catch .refused(let refusal) where refusal.code == .known(.invalidToken) {
                // Expired or revoked already: nothing left to revoke.
            } catch {
                return WebResponse(.serviceUnavailable, text: UIText.of(visitor.locale).unavailable)
            }
        }
        return .redirect(to: "/login", headers: [clear])
    }
}
