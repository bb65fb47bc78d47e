#!/usr/bin/env python3
"""signupd-web behind the nginx site the package ships (docs/nginx/signupd-web.conf), as an
administrator sets it up: TLS (a self-signed certificate), the bridge trusting the local proxy.
Only what a site file can get wrong is changed: the certificate paths, the ports (the page is
served on a port other than 443, which is where a Host without its port breaks the
WebSocket), and the bridge's address.

  - `nginx -t` accepts the file (Debian 12's nginx 1.22);
  - the page comes through with every cookie Secure;
  - the page's own WebSocket opens through nginx (Origin https://localhost:PORT) and a
    keystroke is answered; another origin's is refused;
  - a plain POST signs up, a login sets the Secure HttpOnly token cookie, /whoami names the user.

  python3 Tests/web/behind_nginx.py SIGNUPD SIGNUPD_WEB
"""
import http.cookiejar
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robustness"))
sys.path.insert(0, os.path.dirname(__file__))
from harness import Checks  # noqa: E402
from bridge_harness import Bridge  # noqa: E402
from wsclient import WebSocket  # noqa: E402

signupd, signupd_web = sys.argv[1], sys.argv[2]
checks = Checks("behind nginx")
nginx = shutil.which("nginx") or "/usr/sbin/nginx"
if not os.path.exists(nginx):
    print("SKIP behind nginx: nginx is not installed (scripts/install-deps.sh installs it)")
    sys.exit(0)
work = tempfile.mkdtemp(prefix="signupd-web-nginx-")
os.chmod(work, 0o755)
here = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


bridge = Bridge(signupd, signupd_web, work, daemon_args=["--database", ":memory:"],
                web_args=["--trusted-proxy", "127.0.0.1", "--trusted-proxy", "::1"])
process = None
try:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-keyout", os.path.join(work, "key.pem"), "-out", os.path.join(work, "cert.pem")], check=True, capture_output=True)
    https_port, http_port = free_port(), free_port()
    site = open(os.path.join(here, "..", "..", "docs", "nginx", "signupd-web.conf")).read()
    site = (site.replace("/etc/letsencrypt/live/signup.example.org/fullchain.pem", os.path.join(work, "cert.pem"))
                .replace("/etc/letsencrypt/live/signup.example.org/privkey.pem", os.path.join(work, "key.pem"))
                .replace("listen 443 ", "listen %d " % https_port).replace("listen [::]:443 ", "listen [::]:%d " % https_port)
                .replace("listen 80;", "listen %d;" % http_port).replace("listen [::]:80;", "listen [::]:%d;" % http_port)
                .replace("127.0.0.1:8080", "127.0.0.1:%d" % bridge.port))
    checks.check("127.0.0.1:%d" % bridge.port in site and str(https_port) in site, "the site file has the places an administrator edits")
    open(os.path.join(work, "site.conf"), "w").write(site)
    conf = os.path.join(work, "nginx.conf")
    open(conf, "w").write("pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\n access_log off;\n"
                          " client_body_temp_path %s/body; proxy_temp_path %s/proxy;\n include %s/site.conf;\n}\n" % ((work,) * 5))
    test = subprocess.run([nginx, "-t", "-c", conf], capture_output=True, text=True)
    checks.check(test.returncode == 0, "nginx -t accepts the shipped site: %s" % test.stderr.strip())
    process = subprocess.Popen([nginx, "-c", conf, "-g", "daemon off;"], stderr=open(os.path.join(work, "nginx.out"), "w"))
    origin = "https://localhost:%d" % https_port
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=insecure), urllib.request.HTTPCookieProcessor(jar))

    def request(path, data=None):
        headers = {"Origin": origin} if data is not None else {}
        try:
            with opener.open(urllib.request.Request(origin + path, data=data, headers=headers), timeout=30) as answer:
                return answer.status, answer.headers, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()

    # nginx takes a moment to listen: the first request is retried until it answers.
    for _ in range(100):
        try:
            status, headers, page = request("/signup")
            break
        except (urllib.error.URLError, ConnectionError):
            process.poll()
            checks.check(process.returncode is None, "nginx runs")
            subprocess.run(["sleep", "0.1"])  # waiting for nginx to listen, not synchronising work
    checks.check(status == 200 and 'name="username"' in page, "the page comes through nginx")
    cookies = headers.get_all("Set-Cookie") or []
    checks.check(cookies and all("Secure" in cookie for cookie in cookies), "every cookie is Secure behind https: %s" % cookies)
    bridge_cookies = [cookie for cookie in cookies if not cookie.startswith("lang=")]
    checks.check(bridge_cookies and all(cookie.startswith("__Host-") for cookie in bridge_cookies), "over https the bridge's cookies carry __Host-: %s" % bridge_cookies)
    csrf = re.search(r'name="csrf" value="([0-9a-f]{32})"', page).group(1)

    # The page's own WebSocket through nginx, over TLS, on a port other than 443.
    def websocket(origin_header):
        ws = WebSocket.__new__(WebSocket)
        raw = socket.create_connection(("127.0.0.1", https_port), timeout=15)
        ws.sock = insecure.wrap_socket(raw, server_hostname="localhost")
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        ws.sock.sendall(("GET /ws HTTP/1.1\r\nHost: localhost:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\n\r\n" % (https_port, key, origin_header)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = ws.sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, ws.buffer = data.partition(b"\r\n\r\n")
        ws.status = int(head.split(b" ")[1]) if head else 0
        return ws

    ws = websocket(origin)
    checks.check(ws.status == 101, "the page's own WebSocket opens through nginx: %s" % ws.status)
    checks.check(ws.next_event("hello") is not None, "hello through nginx")
    ws.send({"op": "open", "form": "signup", "id": 1})
    session = ws.next_event("opened")["session"]
    ws.send({"op": "set", "session": session, "field": "password", "value": "abc"})
    validation = ws.next_event("validation")
    while validation is not None and not (validation["field"] == "password" and validation["state"] != "empty"):
        validation = ws.next_event("validation")  # the snapshot of the new session first
    checks.check(validation is not None and validation["state"] == "failed", "a keystroke is answered through nginx")
    ws.close()
    checks.check(websocket("https://evil.example").status == 403, "another origin's WebSocket: 403 through nginx")

    fields = urllib.parse.urlencode({"csrf": csrf, "username": "nginxuser", "password": "behind a proxy 9", "repeatedPassword": "behind a proxy 9"}).encode()
    status, _, page = request("/signup", fields)
    checks.check(status == 200 and "Signed up" in page, "a plain POST signs up through nginx")
    status, headers, page = request("/login", urllib.parse.urlencode({"csrf": csrf, "username": "nginxuser", "password": "behind a proxy 9"}).encode())
    token = [cookie for cookie in (headers.get_all("Set-Cookie") or []) if cookie.startswith("__Host-signupd_token=")]
    checks.check(token and "Secure" in token[0] and "HttpOnly" in token[0], "the login cookie is Secure and HttpOnly: %s" % token)
    status, _, body = request("/whoami")
    checks.check(status == 200 and json.loads(body) == {"user": "nginxuser"}, "/whoami through nginx: %s" % body)
finally:
    if process:
        process.terminate()
        process.wait(timeout=10)
    bridge.stop()
    shutil.rmtree(work, ignore_errors=True)

checks.done()
