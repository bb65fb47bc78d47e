#!/usr/bin/env python3
"""The packaged signupd-web, from outside, as a visitor without script would use it:
a page, a sign-up POST, a login POST whose answer sets the login cookie, /whoami, and a
page from another origin refused the WebSocket. Prints one line per step; exits 1 on the
first that fails.

  python3 packaged_bridge.py http://127.0.0.1:8080 USERNAME PASSWORD
"""
import http.cookiejar
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

base, username, password = sys.argv[1], sys.argv[2], sys.argv[3]
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))


def fail(what):
    print("FAIL: " + what)
    sys.exit(1)


def get(path, headers=None):
    try:
        with opener.open(urllib.request.Request(base + path, headers=headers or {}), timeout=30) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def post(path, fields):
    data = urllib.parse.urlencode(fields).encode()
    try:
        with opener.open(urllib.request.Request(base + path, data=data), timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


status, headers, page = get("/signup", {"Accept-Language": "en"})
if status != 200 or 'name="username"' not in page:
    fail("GET /signup: %s" % status)
if "frame-ancestors 'none'" not in (headers.get("Content-Security-Policy") or ""):
    fail("no CSP on the page")
csrf = re.search(r'name="csrf" value="([0-9a-f]{32})"', page).group(1)
print("page: ok")

status, page = post("/signup", {"csrf": csrf, "username": username, "password": password, "repeatedPassword": password})
if status != 200 or not re.search(r'id="result"[^>]*data-ok="true"[^>]*>Signed up<', page):
    fail("sign-up POST: %s %s" % (status, re.findall(r'class="(?:message|result)"[^>]*>([^<]*)<', page)))
print("signup: ok")

status, page = post("/login", {"csrf": csrf, "username": username, "password": password})
if status != 200 or "Logged in" not in page:
    fail("login POST: %s" % status)
token = [cookie for cookie in jar if cookie.name == "signupd_token"]
if not token or not token[0].has_nonstandard_attr("HttpOnly"):
    fail("the login did not set an HttpOnly token cookie")
print("login: ok")

status, _, body = get("/whoami")
if status != 200 or json.loads(body).get("user") != username:
    fail("/whoami: %s %s" % (status, body))
print("whoami: ok")

status, _, _ = get("/ws", {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                          "Sec-WebSocket-Version": "13", "Origin": "https://evil.example"})
if status != 403:
    fail("a foreign origin's WebSocket got %s, not 403" % status)
print("foreign origin refused: ok")
