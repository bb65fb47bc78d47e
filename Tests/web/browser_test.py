#!/usr/bin/env python3
"""signupd-web in a real Chromium (Debian's chromium and chromium-driver, driven by Selenium).

A signupd and a signupd-web of their own (the bridge trusted by uid, as the package trusts
its group), a headless Chromium typing key by key as a visitor would:

  - sign-up: a taken name -> "Username already taken"; a free one -> available; a short
    password, then matching ones; the button disabled until all three are ok; submit ->
    spinner -> "Signed up";
  - log in -> the signed-in line and GET /whoami name the user; the token is an HttpOnly
    cookie page script cannot read;
  - zh-CN by Accept-Language on the phone forms ("号码长度不足", "密码长度不足"), and the
    switcher changes the language live;
  - JavaScript disabled: the plain POST signs up and shows each field's message;
  - a page from another origin cannot open the WebSocket;
  - a reload mid-form keeps every value;
  - keystroke -> message in the DOM, p50/p99 (a benchmark figure, printed, never asserted).

  python3 Tests/web/browser_test.py SIGNUPD SIGNUPD_WEB [--screenshots DIR] [--keystrokes N]

Screenshots go to DIR (docs/screenshots for the README's), else to a temporary folder.
"""
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
from harness import Checks  # noqa: E402
sys.path.insert(0, os.path.dirname(__file__))
from bridge_harness import Bridge  # noqa: E402
from wsclient import WebSocket  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

signupd, signupd_web = sys.argv[1], sys.argv[2]
shots = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None
keystrokes = int(sys.argv[sys.argv.index("--keystrokes") + 1]) if "--keystrokes" in sys.argv else 200
checks = Checks("browser")
work = tempfile.mkdtemp(prefix="signupd-web-test-")
os.chmod(work, 0o755)
shots = shots or os.path.join(work, "screenshots")
# Chromium's own temporary profile folders go in the run's folder, removed with it.
os.environ["TMPDIR"] = work
os.makedirs(shots, exist_ok=True)


# ---- an availability service the test holds: "octocat" is taken; "slowpoke" and "慢慢来" wait
# until the test releases them (then are taken too)
held_names = {"slowpoke": threading.Event(), "慢慢来": threading.Event()}


class Availability(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = urllib.parse.unquote(self.path.rsplit("/", 1)[-1])
        if name in held_names:
            held_names[name].wait(60)
        self.send_response(200 if name == "octocat" or name in held_names else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


availability = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Availability)
threading.Thread(target=availability.serve_forever, daemon=True).start()

# ---- signupd and signupd-web
bridge = Bridge(signupd, signupd_web, work, daemon_args=[
    "--database", os.path.join(work, "accounts.sqlite"),
    "--availability-url", "http://127.0.0.1:%d/users/{key}" % availability.server_address[1]])
port = bridge.port
base = "http://127.0.0.1:%d" % port


def browser(language="en-US", javascript=True):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=760,900", "--lang=" + language):
        options.add_argument(argument)
    prefs = {"intl.accept_languages": language}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    options.add_experimental_option("prefs", prefs)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


# A condition that reads an element while the page navigates can find it and then see it
# replaced (stale) before reading it; that is the page still changing, so the wait goes on.
# Chromium reports the same race in two more ways when the navigation lands between
# chromedriver's find and its read: "Node with given id does not belong to the document"
# (CI, stop 36) and "Cannot find context with specified id". Any other error still fails.
STILL_CHANGING = (NoSuchElementException, StaleElementReferenceException)
NAVIGATING = ("does not belong to the document", "Cannot find context with specified id")


def still_changing(error):
    return isinstance(error, STILL_CHANGING) or any(text in (error.msg or "") for text in NAVIGATING)


def settled(condition):
    def check(driver):
        try:
            return condition(driver)
        except WebDriverException as error:
            if still_changing(error):
                return False
            raise
    return check


def wait(driver, condition, what, timeout=15):
    try:
        return WebDriverWait(driver, timeout).until(settled(condition))
    except TimeoutException:
        try:
            shown = driver.find_element(By.TAG_NAME, "main").text.replace("\n", " | ")
        except Exception:  # the page may have no main element
            shown = driver.page_source[:500]
        checks.check(False, "%s (timed out; the page shows: %s)" % (what, shown))


def message(driver, field):
    return driver.find_element(By.ID, "m-" + field).text


def live(driver):
    wait(driver, lambda d: d.find_element(By.ID, "form").get_attribute("data-session"), "the form opens a session over the WebSocket")


def type_keys(driver, field, text):
    element = driver.find_element(By.NAME, field)
    for key in text:
        element.send_keys(key)


def clear(driver, field):
    element = driver.find_element(By.NAME, field)
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.BACKSPACE)


def shot(driver, name):
    driver.save_screenshot(os.path.join(shots, name + ".png"))


def button_enabled(driver):
    return driver.find_element(By.ID, "submit").is_enabled()


WATCH_BUSY = """
window.__sawBusy = false;
new MutationObserver(() => { if (document.getElementById('submit').classList.contains('busy')) window.__sawBusy = true; })
  .observe(document.getElementById('submit'), {attributes: true});
"""

try:
    # ---- 1. sign up, English, key by key
    driver = browser()
    try:
        driver.get(base + "/signup")
        live(driver)
        checks.check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en", "English by Accept-Language")
        checks.check(not button_enabled(driver), "the button starts disabled")
        checks.check(driver.find_element(By.CSS_SELECTOR, 'label[for="f-username"]').text == "Username", "labels come from describe")
        shot(driver, "signup-en-empty")

        type_keys(driver, "username", "octocat")
        wait(driver, lambda d: message(d, "username") == "Username already taken", "a taken name typed key by key: Username already taken")
        clear(driver, "username")
        type_keys(driver, "username", "slowpoke")
        wait(driver, lambda d: d.find_element(By.ID, "m-username").get_attribute("data-state") == "validating", "validating while the check runs")
        checks.check(message(driver, "username") == "Checking availability", "the message says so: %r" % message(driver, "username"))
        shot(driver, "signup-en-validating")
        held_names["slowpoke"].set()
        wait(driver, lambda d: message(d, "username") == "Username already taken", "the held check's answer arrives")
        clear(driver, "username")
        type_keys(driver, "username", "alice")
        wait(driver, lambda d: message(d, "username") == "Username available", "a free name: Username available")
        checks.check(not button_enabled(driver), "disabled with only the name valid")

        type_keys(driver, "password", "abc")
        wait(driver, lambda d: message(d, "password") == "Password must be at least 5 characters", "a short password: %r" % message(driver, "password"))
        type_keys(driver, "password", " correct horse")
        wait(driver, lambda d: d.find_element(By.ID, "m-password").get_attribute("data-state") == "ok", "a long password is ok")
        type_keys(driver, "repeatedPassword", "abc correct")
        wait(driver, lambda d: d.find_element(By.ID, "m-repeatedPassword").get_attribute("data-state") == "failed", "a different repeat fails")
        checks.check(not button_enabled(driver), "disabled while the passwords differ")
        type_keys(driver, "repeatedPassword", " horse")
        wait(driver, lambda d: message(d, "repeatedPassword") == "Passwords match", "matching passwords: Passwords match")
        wait(driver, button_enabled, "the button is enabled once signupd says so")
        shot(driver, "signup-en-ready")

        driver.execute_script(WATCH_BUSY)
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: d.find_element(By.ID, "result").text == "Signed up", "submit -> Signed up")
        checks.check(driver.execute_script("return window.__sawBusy"), "the spinner showed while signing up")
        checks.check(driver.find_element(By.ID, "busy").get_attribute("hidden") is not None, "the spinner is gone after the result")
        checks.check(driver.switch_to.active_element.get_attribute("id") == "result", "keyboard focus moves to the result, not to the page's body")
        shot(driver, "signup-en-done")

        # ---- keyboard only: Tab reaches every input and the button, in order, with visible focus
        driver.get(base + "/login")
        live(driver)
        order = []
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        for _ in range(12):
            active = driver.switch_to.active_element
            order.append(active.get_attribute("name") or active.get_attribute("id") or active.tag_name)
            outline = active.value_of_css_property("outline-style")
            if active.get_attribute("name") == "username":
                checks.check(outline not in ("none", ""), "the focused input has a visible outline: %r" % outline)
            active.send_keys(Keys.TAB)
        checks.check(order.index("username") < order.index("password"), "Tab goes from the name to the password: %s" % order)

        # ---- 2. log in -> /whoami names the user; the token stays out of page script
        type_keys(driver, "username", "alice")
        type_keys(driver, "password", "abc correct horse")
        wait(driver, button_enabled, "login enabled")
        driver.find_element(By.NAME, "password").send_keys(Keys.ENTER)
        wait(driver, lambda d: d.find_element(By.ID, "result").text == "Logged in", "log in -> Logged in")
        wait(driver, lambda d: d.find_element(By.ID, "user").text == "alice", "the page says who is signed in")
        checks.check("signupd_token" not in driver.execute_script("return document.cookie"), "the token cookie is HttpOnly: page script cannot read it")
        token_cookie = driver.get_cookie("signupd_token")
        checks.check(token_cookie is not None and token_cookie["httpOnly"] and token_cookie["sameSite"] == "Strict", "the token is an HttpOnly SameSite=Strict cookie: %r" % token_cookie)
        driver.get(base + "/whoami")
        checks.check(json.loads(driver.find_element(By.TAG_NAME, "body").text) == {"user": "alice"}, "/whoami names the user")
        # Log out: the cookie goes and signupd revoked the token.
        driver.get(base + "/login")
        driver.find_element(By.CSS_SELECTOR, "#signed-in button").click()
        wait(driver, lambda d: d.current_url.endswith("/login") and not d.find_element(By.ID, "signed-in").is_displayed(), "logout returns to the login page, signed out")
        checks.check(driver.get_cookie("signupd_token") is None, "logout removes the cookie")
        driver.get(base + "/whoami")
        checks.check(json.loads(driver.find_element(By.TAG_NAME, "body").text)["error"] == "not_signed_in", "/whoami after logout: not signed in")

        # ---- keystroke -> message in the DOM (a benchmark figure: printed, not asserted)
        driver.get(base + "/signup")
        live(driver)
        type_keys(driver, "password", "abc correct horse")
        wait(driver, lambda d: d.find_element(By.ID, "m-password").get_attribute("data-state") == "ok", "password ok before timing")
        latencies = driver.execute_async_script("""
            const [count, done] = arguments;
            const input = document.getElementById('f-repeatedPassword');
            const message = document.getElementById('m-repeatedPassword');
            const values = ['abc correct horse', 'abc correct hors'];
            const times = [];
            let i = 0, start = 0;
            const observer = new MutationObserver(() => {
              times.push(performance.now() - start);
              if (++i === count) { observer.disconnect(); done(times); return; }
              setTimeout(next, 40);  // a fast typist: 25 keys a second (the bridge paces floods)
            });
            observer.observe(message, {childList: true, characterData: true, subtree: true});
            function next() {
              start = performance.now();
              input.value = values[i % 2];
              input.dispatchEvent(new Event('input', {bubbles: true}));
            }
            next();
        """, keystrokes)
        latencies.sort()
        p50, p99 = latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        checks.check(len(latencies) == keystrokes, "every keystroke's message arrived")
        print("  keystroke -> message in the DOM (Chromium, %d keystrokes): p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (keystrokes, p50, p99, latencies[-1]))

        # ---- 3. reload mid-form keeps every value
        driver.get(base + "/signup")
        live(driver)
        type_keys(driver, "username", "carol")
        type_keys(driver, "password", "another long secret")
        type_keys(driver, "repeatedPassword", "another long secret")
        wait(driver, button_enabled, "carol's form is ready")
        before = driver.find_element(By.ID, "form").get_attribute("data-session")
        driver.refresh()
        live(driver)
        checks.check(driver.find_element(By.ID, "form").get_attribute("data-session") == before, "the reload resumed the same session")
        checks.check(driver.find_element(By.NAME, "username").get_attribute("value") == "carol", "the name is back after the reload")
        wait(driver, lambda d: message(d, "repeatedPassword") == "Passwords match", "signupd kept the passwords: their messages are back")
        checks.check(driver.find_element(By.NAME, "password").get_attribute("placeholder") != "", "a kept password says so")
        wait(driver, button_enabled, "the button is enabled after the reload")
        # A dropped network: the bridge goes away and comes back on the same port; the page
        # reconnects by itself and resumes the same session.
        bridge.web.kill()
        bridge.web.wait(timeout=10)
        wait(driver, lambda d: d.find_element(By.ID, "form").get_attribute("data-session") is None, "the page notices the dropped WebSocket")
        bridge.web, _ = bridge.start_web(signupd_web, ["--listen", "127.0.0.1:%d" % port])
        live(driver)
        checks.check(driver.find_element(By.ID, "form").get_attribute("data-session") == before, "after the dropped network the page resumed the same session")
        checks.check(driver.find_element(By.NAME, "username").get_attribute("value") == "carol", "and the name is still there")
        wait(driver, button_enabled, "the button is enabled again")
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: d.find_element(By.ID, "result").text == "Signed up", "carol signs up after the reload and the dropped network")
    finally:
        driver.quit()

    # ---- 4. zh-CN: the phone forms, then the switcher
    driver = browser("zh-CN")
    try:
        driver.get(base + "/phone-signup")
        live(driver)
        checks.check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-CN", "Simplified Chinese by Accept-Language")
        shot(driver, "phone-signup-zh-CN-empty")
        type_keys(driver, "phone", "138001")
        wait(driver, lambda d: message(d, "phone") == "号码长度不足", "a short number: 号码长度不足 (%r)" % message(driver, "phone"))
        driver.get(base + "/phone-login")
        live(driver)
        type_keys(driver, "phone", "138001")
        type_keys(driver, "password", "abc")
        wait(driver, lambda d: message(d, "password") == "密码长度不足", "a short password: 密码长度不足 (%r)" % message(driver, "password"))
        wait(driver, lambda d: message(d, "phone") == "号码长度不足", "phone login: 号码长度不足")
        shot(driver, "phone-login-zh-CN-validating")
        driver.find_element(By.CSS_SELECTOR, 'nav.languages a[data-locale="en"]').click()
        wait(driver, lambda d: message(d, "phone") == "Phone number too short", "the switcher changes the messages live")
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, 'label[for="f-phone"]').text == "Phone number", "and the labels")
        driver.find_element(By.CSS_SELECTOR, 'nav.languages a[data-locale="zh-CN"]').click()
        wait(driver, lambda d: message(d, "phone") == "号码长度不足", "and back")
        driver.get(base + "/signup")
        live(driver)
        type_keys(driver, "username", "慢慢来")
        wait(driver, lambda d: d.find_element(By.ID, "m-username").get_attribute("data-state") == "validating", "zh-CN: validating while the check runs")
        shot(driver, "signup-zh-CN-validating")
        held_names["慢慢来"].set()
        wait(driver, lambda d: message(d, "username") == "用户名已存在", "zh-CN: the held check's answer (%r)" % message(driver, "username"))
        clear(driver, "username")
        type_keys(driver, "username", "李小龙")
        type_keys(driver, "password", "abc correct horse")
        type_keys(driver, "repeatedPassword", "abc correct horse")
        wait(driver, button_enabled, "zh-CN sign-up ready")
        shot(driver, "signup-zh-CN-ready")
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: d.find_element(By.ID, "result").get_attribute("data-ok") == "true", "zh-CN sign-up done")
        shot(driver, "signup-zh-CN-done")
    finally:
        driver.quit()

    # ---- 5. JavaScript disabled: the plain POST
    driver = browser(javascript=False)
    try:
        driver.get(base + "/signup")
        checks.check(driver.find_element(By.ID, "form").get_attribute("data-session") is None, "no script: no WebSocket session")
        driver.find_element(By.NAME, "username").send_keys("octocat")
        driver.find_element(By.NAME, "password").send_keys("abc")
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: message(d, "username") == "Username already taken", "no script: the POST shows the taken name")
        checks.check(message(driver, "password") == "Password must be at least 5 characters", "no script: and the short password")
        checks.check(driver.find_element(By.NAME, "username").get_attribute("value") == "octocat", "no script: the name is kept, the password is not echoed")
        checks.check(driver.find_element(By.NAME, "password").get_attribute("value") == "", "no script: the password is not sent back")
        clear(driver, "username")
        driver.find_element(By.NAME, "username").send_keys("dave")
        driver.find_element(By.NAME, "password").send_keys("no script needed 42")
        driver.find_element(By.NAME, "repeatedPassword").send_keys("no script needed 42")
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: d.find_element(By.ID, "result").text == "Signed up", "no script: dave signs up with a plain POST")
        checks.check(message(driver, "username") == "Username available", "no script: each field's message is shown")
        shot(driver, "signup-en-noscript-done")
    finally:
        driver.quit()

    # ---- 5b. a WebSocket that never opens (here: its one place is taken) leaves a plain form
    one, one_port = bridge.start_web(signupd_web, ["--max-websockets-per-address", "1"])
    squatter = WebSocket(one_port, origin="http://127.0.0.1:%d" % one_port)
    checks.check(squatter.status == 101, "the only WebSocket place is taken")
    driver = browser()
    try:
        driver.get("http://127.0.0.1:%d/signup" % one_port)
        wait(driver, lambda d: d.find_elements(By.ID, "notice-plain") and button_enabled(d), "without a WebSocket the page says so and enables the plain form")
        driver.find_element(By.NAME, "username").send_keys("erin")
        driver.find_element(By.NAME, "password").send_keys("no socket needed 7")
        driver.find_element(By.NAME, "repeatedPassword").send_keys("no socket needed 7")
        driver.find_element(By.ID, "submit").click()
        wait(driver, lambda d: d.find_element(By.ID, "result").text == "Signed up", "the plain POST signs erin up")
    finally:
        driver.quit()
        squatter.close()
        one.terminate()
        one.wait(timeout=10)

    # ---- 6. a page from another origin cannot open the WebSocket
    class Foreign(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = ("<!doctype html><title>foreign</title><p id=state>connecting</p><script>"
                    "const ws = new WebSocket('ws://127.0.0.1:%d/ws');"
                    "ws.onopen = () => document.getElementById('state').textContent = 'opened';"
                    "ws.onclose = () => { if (document.getElementById('state').textContent !== 'opened') document.getElementById('state').textContent = 'refused'; };"
                    "</script>") % port
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    foreign = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Foreign)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    driver = browser()
    try:
        driver.get("http://127.0.0.1:%d/" % foreign.server_address[1])
        wait(driver, lambda d: d.find_element(By.ID, "state").text in ("opened", "refused"), "the foreign page's WebSocket settles")
        checks.check(driver.find_element(By.ID, "state").text == "refused", "a page from another origin cannot open the WebSocket")
    finally:
        driver.quit()
        foreign.shutdown()
finally:
    bridge.stop()
    availability.shutdown()
    # Screenshots outlive the run only where --screenshots put them.
    shutil.rmtree(work, ignore_errors=True)

checks.done()
