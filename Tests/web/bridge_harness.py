"""A signupd and a signupd-web of a test's own: signupd trusts the test's uid as a front end
(the package trusts its group), Argon2id at its cheapest, the bridge on a free port."""
import os
import re
import subprocess
import threading
import time


class Bridge:
    def __init__(self, signupd, signupd_web, work, daemon_args=(), web_args=()):
        self.socket = os.path.join(work, "signupd.sock")
        self.daemon = subprocess.Popen(
            [signupd, "--socket", self.socket, "--socket-mode", "0600", "--trusted-bridge-uid", str(os.getuid()),
             "--argon2-ops", "1", "--argon2-memory-kib", "8192"] + list(daemon_args),
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "signupd.log"), "w"))
        deadline = time.monotonic() + 30
        while not os.path.exists(self.socket) and self.daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for the socket file to appear, not synchronising work
        if not os.path.exists(self.socket):
            raise AssertionError("signupd did not start")
        self.web, self.port = self.start_web(signupd_web, web_args)
        self.origin = "http://127.0.0.1:%d" % self.port

    def start_web(self, signupd_web, web_args):
        """Another signupd-web on the same signupd; returns the process and its port."""
        listen = [] if "--listen" in web_args else ["--listen", "127.0.0.1:0"]
        web = subprocess.Popen([signupd_web, "--socket", self.socket] + listen + list(web_args),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in web.stdout:
            found = re.search(r":(\d+) for signupd", line)
            if found:
                threading.Thread(target=lambda: [None for _ in web.stdout], daemon=True).start()
                return web, int(found.group(1))
        raise AssertionError("signupd-web did not say where it listens")

    def stop(self):
        for process in (self.web, self.daemon):
            process.terminate()
            process.wait(timeout=30)
