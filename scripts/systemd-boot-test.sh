#!/usr/bin/env bash
# Installs signupd the way the README tells an administrator to — `apt install` of the
# Debian package — into a real systemd 252 booted as PID 1 in private namespaces, and uses
# it the way people do: as a non-root member of the access group, as a user who is not a
# member, and as root. No test-only override of the socket's owner or group: only the
# documented `systemctl edit`-style drop-in that shortens the idle exit.
#
# The sandbox gets writable copies of /usr, /etc, /var and /home (overlayfs), so that apt, dpkg,
# systemd-sysusers and useradd change only the sandbox; the host's unit directories are
# hidden so that only the standard targets and signupd's own units exist inside.
#
# Checks: the package installs and starts the socket; connect before the service starts
# (socket activation), after it started, after idle exit, after `systemctl restart`; a
# non-member gets exit 3 with a hint naming the group; root works; StatusText shows the
# counts; the journal has no warning; a member scrapes the metrics socket and a non-member
# cannot; only root pauses sign-up; a throttled login and a displacement are in the journal
# with uid and pid; the database is 0600 in a 0700 directory; the socket's
# directory keeps its owner; `systemctl help signupd`, `man signupctl` and completions work;
# an https availability service is trusted through a CA file in /etc/signupd and through
# /etc/ssl/certs, and an unknown CA is refused;
# installing a newer package while a client pings in a loop fails no ping and keeps the
# accounts; 50 clients mid-form carry on across `systemctl restart` and a package upgrade,
# stop says bye shutdown, kill -9 gets bye restarted from the next process; purge removes
# the state; then the README's by-hand steps, run from its text.
#
# Needs root and a kernel that allows the namespaces and overlayfs; otherwise it says why
# and exits 0 as skipped ("SKIP: ..." on stdout).
#
# usage: scripts/systemd-boot-test.sh dist/signupd_VERSION_ARCH.deb
#        SANDBOX_ONLY=1 [SANDBOX_SECONDS=1800] scripts/systemd-boot-test.sh PACKAGE
#          boots the sandbox with the package in /run/sandbox-pkg, installs nothing, prints
#          how to enter it (nsenter) and leaves it running for SANDBOX_SECONDS: a clean
#          Debian machine with systemd as PID 1 to try the README's steps in by hand.
set -u
# The sandbox is a clean machine with its own /tmp: a TMPDIR of the caller's is not there.
unset TMPDIR
DEB=$(realpath "$1")
skip() { echo "SKIP: $*"; exit 0; }
fail() {
  echo "FAIL: $*"
  [ -f "$STATE/console.log" ] && tail -20 "$STATE/console.log"
  ns_exec journalctl --no-pager -u signupd.service -u signupd.socket 2>/dev/null | tail -30
  [ -n "${KEEP_SANDBOX:-}" ] && { echo "sandbox kept: nsenter -t $PID1 -a"; keep=1; exit 1; }
  exit 1
}
# However it ends (pass, fail, skip, an interrupt), the sandbox goes down and its files
# (the overlays' upper layers, the repacked package) are removed, unless it is kept on purpose.
keep=
STATE=
cleanup() {
  [ -n "$keep" ] && return
  [ -n "${WRAPPER:-}" ] && down
  [ -n "$STATE" ] && rm -rf "$STATE"
}
trap cleanup EXIT
pass() { checks=$((checks + 1)); }
checks=0

[ "$(id -u)" = 0 ] || skip "needs root to boot systemd in namespaces"
command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "unshare/nsenter missing"
[ -x /lib/systemd/systemd ] || skip "systemd is not installed"
[ -f "$DEB" ] || { echo "FAIL: no package at $1 (scripts/build-deb.sh builds it)"; exit 1; }

STATE=$(mktemp -d /tmp/signupd-systemd.XXXXXX)
# This checkout, as the sandbox sees it: /run/sandbox-src, bound read-only before the sandbox
# hides /tmp behind its own tmpfs. Nothing inside the sandbox names the checkout's own path,
# which may be under /tmp or in a directory only root can enter.
HERE=$(cd "$(dirname "$0")/.." && pwd)
SRC=/run/sandbox-src
TESTS=/run/sandbox-tests
CG=signupd-test-$$
mkdir -p "$STATE/units"
cat > "$STATE/units/sandbox.target" <<UNIT
[Unit]
Description=signupd test sandbox
Requires=basic.target
After=basic.target
Wants=systemd-journald.socket
UNIT
# A newer build of the same package, for the upgrade: same files, higher version.
dpkg-deb -R "$DEB" "$STATE/repack"
sed -i 's/^Version: \(.*\)$/Version: \1+boottest1/' "$STATE/repack/DEBIAN/control"
dpkg-deb -b "$STATE/repack" "$STATE/signupd_newer.deb" >/dev/null || { echo "FAIL: could not repack the package"; exit 1; }

cat > "$STATE/init.sh" <<INIT
#!/bin/bash
set -e
mount --make-rprivate /
# Writable copies of the system: what apt, dpkg, sysusers and useradd write stays here.
for d in usr etc var home; do
  mkdir -p $STATE/ov/\$d/up $STATE/ov/\$d/work
  mount -t overlay overlay -o lowerdir=/\$d,upperdir=$STATE/ov/\$d/up,workdir=$STATE/ov/\$d/work /\$d
done
mount -t tmpfs -o mode=755 tmpfs /run
# A clean machine: nothing of signupd's from the build host (say, a database made by hand).
rm -rf /var/lib/signupd /var/lib/private/signupd
mkdir -p /run/systemd/system /run/lock /run/sandbox-units /run/sandbox-nogen /run/sandbox-pkg
for u in sysinit basic sockets timers paths slices shutdown poweroff final umount exit halt local-fs local-fs-pre swap; do
  cp /usr/lib/systemd/system/\$u.target /run/sandbox-units/; done
cp /usr/lib/systemd/system/systemd-{poweroff,exit,halt}.service /run/sandbox-units/
cp /usr/lib/systemd/system/systemd-journald{.service,.socket,-dev-log.socket} /run/sandbox-units/
cp $STATE/units/* /run/sandbox-units/
# A container image's policy-rc.d forbids starting services; a Debian system has none.
rm -f /usr/sbin/policy-rc.d
cp $DEB $STATE/signupd_newer.deb /run/sandbox-pkg/
mkdir -p $SRC; mount --bind "$HERE" $SRC; mount -o remount,bind,ro $SRC
# The scripts the sandbox runs, readable by its service users whatever the checkout's mode.
install -d -m 0755 $TESTS; install -m 0644 "$HERE"/Tests/robustness/{restart_handover,https_service,corrupt_state_service}.py "$HERE"/Tests/web/packaged_bridge.py "$HERE"/Tests/operators/packaged_operator.py $TESTS/
# Only the standard targets above and what the package installs: the host's units stay hidden.
mount -t tmpfs -o mode=755 tmpfs /usr/lib/systemd/system
mount -t tmpfs -o mode=755 tmpfs /etc/systemd/system
mount -t tmpfs tmpfs /var/log
: > $STATE/console.log; mount --bind $STATE/console.log /dev/console
mount -t tmpfs -o mode=1777 tmpfs /tmp; mount -t tmpfs -o mode=1777 tmpfs /var/tmp
umount -R /sys/fs/cgroup 2>/dev/null || true
mount -t tmpfs -o mode=755 cgroup_root /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
exec env -i container=signupd-test PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_UNIT_PATH=/run/sandbox-units:/etc/systemd/system:/run/systemd/system:/usr/lib/systemd/system SYSTEMD_GENERATOR_PATH=/run/sandbox-nogen SYSTEMD_ENVIRONMENT_GENERATOR_PATH=/run/sandbox-nogen /lib/systemd/systemd --system --unit=sandbox.target
INIT
chmod +x "$STATE/init.sh"

bash -c "for h in systemd unified; do mkdir -p /sys/fs/cgroup/\$h/$CG 2>/dev/null && echo \$\$ > /sys/fs/cgroup/\$h/$CG/cgroup.procs 2>/dev/null; done
         exec timeout -s KILL ${SANDBOX_SECONDS:-420} unshare --pid --fork --mount --mount-proc --uts --ipc --net --cgroup --kill-child=SIGKILL $STATE/init.sh" > "$STATE/out.log" 2>&1 &
WRAPPER=$!
PID1=
for _ in $(seq 1 100); do
  u=$(pgrep -P $WRAPPER -x unshare) && p=$(pgrep -P "$u") && PID1=$p && \
    s=$(timeout 5 nsenter -t "$p" -a systemctl is-system-running 2>/dev/null) && { [ "$s" = running ] || [ "$s" = degraded ]; } && break
  kill -0 $WRAPPER 2>/dev/null || break
  sleep 0.1  # polling the boot of a separate init: there is no event to wait on from outside
done
ns_exec() { timeout 60 nsenter -t "$PID1" -a "$@"; }
# A command as a user of the sandbox, with the environment a login would give (Debian's PATH).
as() { local user=$1; shift; ns_exec runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$@"; }
down() {
  [ -n "$PID1" ] && timeout 10 nsenter -t "$PID1" -a systemctl poweroff >/dev/null 2>&1
  for _ in $(seq 1 50); do kill -0 $WRAPPER 2>/dev/null || break; sleep 0.1; done
  kill -KILL $WRAPPER 2>/dev/null; wait $WRAPPER 2>/dev/null
  for h in systemd unified; do find /sys/fs/cgroup/$h/$CG -depth -type d -exec rmdir {} \; 2>/dev/null; done
}
state=$(ns_exec systemctl is-system-running 2>/dev/null)
if [ "$state" != running ] && [ "$state" != degraded ]; then
  reason=$(tail -3 "$STATE/out.log" | tr '\n' ' ')
  skip "systemd did not boot in namespaces here (${state:-no answer}): $reason"
fi
if [ -n "${SANDBOX_ONLY:-}" ]; then
  echo "sandbox running for ${SANDBOX_SECONDS:-420} s: nsenter -t $PID1 -a bash   (stop: nsenter -t $PID1 -a systemctl poweroff; then rm -rf $STATE)"
  keep=1; exit 0
fi
show() { ns_exec systemctl show -p "$1" --value signupd.service; }
wait_for() {  # wait_for PROPERTY VALUE: systemd's state, polled (no event reaches the host)
  for _ in $(seq 1 150); do [ "$(show "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1
}

# 0. The sandbox's /etc is an overlay of the build host's, and a host used for testing may
# already have the users and groups this test creates (say, alice, and bob as a member of
# signupd-clients, left by another tester): remove them here — in the sandbox only, the
# host's /etc is never written — so that the machine is as clean as the steps below assume.
for user in alice bob signupd; do
  if ns_exec getent passwd "$user" >/dev/null; then ns_exec userdel "$user" || fail "removing the host's user $user from the sandbox"; fi
done
for group in alice bob signupd signupd-clients signupd-bridges signupd-admins; do
  if ns_exec getent group "$group" >/dev/null; then ns_exec groupdel "$group" || fail "removing the host's group $group from the sandbox"; fi
done

# 1. Install as the README says; the administrator adds alice to the group; bob is not in it.
install_log=$(ns_exec env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /run/sandbox-pkg/"$(basename "$DEB")" 2>&1) || fail "apt install: $install_log"
ns_exec useradd -M alice && ns_exec useradd -M bob || fail "useradd"
ns_exec usermod -aG signupd-clients alice || fail "usermod -aG signupd-clients alice"
[ "$(ns_exec systemctl is-active signupd.socket)" = active ] || fail "the package did not start signupd.socket: $install_log"
[ "$(ns_exec systemctl is-enabled signupd.socket)" = enabled ] || fail "the package did not enable signupd.socket"
[ "$(show ActiveState)" = inactive ] || fail "signupd.service started before any connection"
sock_owner() { ns_exec stat -c '%U:%G %a' /run/signupd/signupd.sock; }
dir_owner() { ns_exec stat -c '%U:%G %a' /run/signupd; }
[ "$(sock_owner)" = "root:signupd-clients 660" ] || fail "socket is $(sock_owner), not root:signupd-clients 660"
[ "$(dir_owner)" = "root:root 755" ] || fail "/run/signupd is $(dir_owner), not root:root 755"
pass

# 2. alice connects before the service runs: socket activation; she signs up and logs in.
out=$(as alice signupctl ping 2>&1) || fail "alice's first ping (socket activation): $out"
[ "$(show ActiveState)" = active ] || fail "the first connection did not start signupd.service"
out=$(printf 'p4ssword\n' | as alice signupctl signup --username alice --password-stdin 2>&1) || fail "alice's signup: $out"
token=$(printf 'p4ssword\n' | as alice signupctl login --username alice --password-stdin 2>&1) || fail "alice's login: $token"
out=$(printf '%s\n' "$token" | as alice signupctl verify -- "$token" 2>&1) || fail "verify: $out"
[ "$(sock_owner)" = "root:signupd-clients 660" ] || fail "after the service started the socket is $(sock_owner)"
[ "$(dir_owner)" = "root:root 755" ] || fail "after the service started /run/signupd is $(dir_owner)"
out=$(as alice signupctl ping 2>&1) || fail "alice's ping once the service runs: $out"
pass

# 3. bob is not in the group: exit 3 and a hint that names it. root connects.
out=$(as bob signupctl ping 2>&1); code=$?
[ $code = 3 ] || fail "bob (not a member) got exit $code, not 3: $out"
echo "$out" | grep -q "signupd-clients" || fail "bob's error does not name the group signupd-clients: $out"
out=$(ns_exec signupctl ping 2>&1) || fail "root's ping: $out"
pass

# 4. The state directory and database are private; the service runs as signupd.
[ "$(ns_exec stat -c '%U %a' /var/lib/signupd)" = "signupd 700" ] || fail "/var/lib/signupd is $(ns_exec stat -c '%U %a' /var/lib/signupd)"
[ "$(ns_exec stat -c '%U %a' /var/lib/signupd/accounts.sqlite)" = "signupd 600" ] || fail "accounts.sqlite is $(ns_exec stat -c '%U %a' /var/lib/signupd/accounts.sqlite)"
[ "$(ns_exec ps -o user= -p "$(show MainPID)")" = signupd ] || fail "the service does not run as signupd"
# --pin-event-loops auto (README): with one loop per CPU the service may use, each loop
# thread runs on a CPU of its own (the unit's SystemCallFilter must allow it: a refusal is a
# warning, caught in 5).
main=$(show MainPID)
allowed=$(ns_exec python3 -c "import os; print(len(os.sched_getaffinity($main)))")
loops=$(for t in $(ns_exec ls "/proc/$main/task"); do
  case "$(ns_exec cat "/proc/$main/task/$t/comm")" in NIO-ELT-*) ns_exec grep Cpus_allowed_list "/proc/$main/task/$t/status" | awk '{print $2}';; esac
done | sort | tr '\n' ' ')
if [ "$allowed" -gt 1 ] && [ "$(echo $loops | wc -w)" = "$allowed" ]; then
  [ "$(echo $loops | tr ' ' '\n' | sort -u | wc -w)" = "$allowed" ] && ! echo "$loops" | grep -q '[,-]' \
    || fail "the event loops are not pinned one per CPU ($allowed CPUs): $loops"
  pin_note="event loops pinned to CPUs $loops"
else
  pin_note="event loops not pinned ($allowed CPUs, loops on $loops)"
fi
pass

# 5. systemctl status shows the counts; the journal of a normal start has no warning.
status=""
for _ in $(seq 1 30); do
  status=$(ns_exec systemctl status --no-pager signupd.service 2>&1); echo "$status" | grep -q "1 signups" && break; sleep 0.2  # STATUS= is refreshed once a second
done
echo "$status" | grep -Eq 'Status: "[0-9]+ connections, [0-9]+ sessions, 1 signups' || fail "systemctl status does not show the counts: $status"
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  warnings=$(ns_exec journalctl -u signupd.service -p warning -q --no-pager 2>&1)
  [ -z "$warnings" ] || fail "the journal has warnings from a normal start: $warnings"
  failed=$(ns_exec journalctl -u signupd.service -q --no-pager 2>&1 | grep -i "fail")
  # LimitNICE=-4 lets Dispatch give a worker thread nice -4. Where the sandbox's own hard
  # limit cannot be raised (a container without CAP_SYS_RESOURCE), systemd cannot apply it
  # and that one message is expected; anywhere else it must not appear.
  if ! ns_exec grep -Eq "^Max nice priority +24 +24" "/proc/$(show MainPID)/limits" && ! prlimit --nice=24:24 true 2>/dev/null; then
    failed=$(echo "$failed" | grep -v "Failed to set thread priority for worker thread")
    journal_note="journal without warnings (LimitNICE not applicable in this container)"
  fi
  [ -z "$failed" ] || fail "the journal of a normal start reports a failure: $failed"
  journal=$(ns_exec journalctl -u signupd.service -o verbose --no-pager 2>/dev/null)
  echo "$journal" | grep -q "SIGNUPD_USER=alice" || fail "the journal lacks the structured SIGNUPD_USER field"
  ! echo "$journal" | grep -q "p4ssword" || fail "the password reached the journal"
  journal_note=${journal_note:-journal without warnings}
else
  journal_note="journald did not start here: journal not checked"
fi
pass

# 5b. Operators (README "Metrics", "Operating signupd"): a member of signupd-clients scrapes the
# installed metrics socket and finds alice's signup counted; a non-member is refused; alice
# (no administrator) cannot pause sign-up; root pauses it and alice's signup is refused with
# the documented message, her login works; resumed. A throttled login and a displacement are
# in the plain journal with uid and pid.
metrics=$(as alice python3 $TESTS/packaged_operator.py scrape /run/signupd/metrics.sock 2>&1) || fail "alice (in signupd-clients) cannot scrape /run/signupd/metrics.sock: $metrics"
echo "$metrics" | grep -q '^signupd_signups_total{form="signup",outcome="ok"} 1' || fail "the scrape does not count alice's signup: $(echo "$metrics" | grep signups_total)"
[ "$(ns_exec stat -c '%G %a' /run/signupd/metrics/metrics.sock)" = "signupd-clients 660" ] || fail "the metrics socket is $(ns_exec stat -c '%G %a' /run/signupd/metrics/metrics.sock)"
out=$(as bob python3 $TESTS/packaged_operator.py scrape /run/signupd/metrics.sock 2>&1); code=$?
[ $code = 2 ] || fail "bob (not in signupd-clients) was not refused the metrics socket (exit $code): $out"
out=$(as alice signupctl signups pause 2>&1); code=$?
[ $code = 1 ] && echo "$out" | grep -q forbidden || fail "alice (not in signupd-admins) paused sign-up (exit $code): $out"
out=$(ns_exec signupctl signups pause --message "maintenance" 2>&1) || fail "root's signups pause: $out"
out=$(printf 'p4ssword\n' | as alice signupctl --json signup --username paused1 --password-stdin 2>&1); code=$?
[ $code = 1 ] && echo "$out" | grep -q '"messageId":"signup.paused_note"' || fail "a signup while paused was not refused with signup.paused_note (exit $code): $out"
out=$(printf 'p4ssword\n' | as alice signupctl login --username alice --password-stdin 2>&1) || fail "alice's login while sign-up is paused: $out"
out=$(ns_exec signupctl signups resume 2>&1) || fail "root's signups resume: $out"
for _ in 1 2 3 4 5 6; do printf 'wrong password\n' | as alice signupctl login --username ghostname --password-stdin >/dev/null 2>&1; done
alice_uid=$(ns_exec id -u alice)
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  line=$(ns_exec journalctl -u signupd.service --no-pager 2>/dev/null | grep "login throttled" | head -1)
  echo "$line" | grep -q "uid=$alice_uid" && echo "$line" | grep -Eq "pid=[0-9]+" || fail "the throttled login is not in the plain journal with uid and pid: $line"
  line=$(ns_exec journalctl -u signupd.service --no-pager 2>/dev/null | grep "signup paused\|sign-up paused by an administrator" | head -1)
  echo "$line" | grep -q "uid=0" || fail "the pause is not in the journal with who did it: $line"
fi
pass

# 6. The documentation is installed: systemctl help, man pages, completions; the units verify.
out=$(ns_exec env SYSTEMD_PAGER=cat MANPAGER=cat MANWIDTH=80 systemctl help signupd.service 2>&1) || fail "systemctl help signupd: $out"
echo "$out" | grep -q "SIGNUPD(8)" || fail "systemctl help signupd does not show signupd(8): $(echo "$out" | head -5)"
out=$(ns_exec env MANPAGER=cat MANWIDTH=80 man signupctl 2>&1) || fail "man signupctl: $out"
echo "$out" | grep -q "EXIT STATUS" || fail "man signupctl has no EXIT STATUS section"
out=$(ns_exec env MANPAGER=cat MANWIDTH=80 man 7 signupd-protocol 2>&1) || fail "man 7 signupd-protocol: $out"
out=$(ns_exec bash -c 'source /usr/share/bash-completion/completions/signupctl && complete -p signupctl' 2>&1) || fail "bash completion: $out"
ns_exec test -s /usr/share/zsh/vendor-completions/_signupctl || fail "no zsh completion"
ns_exec test -s /usr/share/fish/vendor_completions.d/signupctl.fish || fail "no fish completion"
out=$(ns_exec env SYSTEMD_UNIT_PATH=/run/sandbox-units:/etc/systemd/system:/usr/lib/systemd/system systemd-analyze verify /usr/lib/systemd/system/signupd.socket /usr/lib/systemd/system/signupd.service 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
pass

# 6b. An operator's form from the shipped examples: checked, then live after a reload,
# while the service keeps running (same main process).
ns_exec cp /usr/share/doc/signupd/examples/forms.d/email-signup.form /etc/signupd/forms.d/ || fail "no example form in /usr/share/doc/signupd/examples"
out=$(ns_exec runuser -u signupd -- /usr/sbin/signupd --check-config 2>&1) || fail "signupd --check-config on the example form: $out"
out=$(as alice signupctl ping 2>&1) || fail "alice's ping before the reload: $out"
running=$(show MainPID)
ns_exec systemctl reload signupd.service || fail "systemctl reload signupd"
[ "$(show MainPID)" = "$running" ] || fail "systemctl reload restarted the service"
# systemctl reload returns once SIGHUP is sent (Type=notify-reload, which waits, needs
# systemd 253): the new form is served within moments.
for _ in $(seq 1 50); do
  out=$(as alice signupctl describe 2>&1) || fail "describe after the reload: $out"
  echo "$out" | grep -q "email-signup" && break; sleep 0.1  # polling: no event reaches the host
done
echo "$out" | grep -q "email-signup" || fail "the operator's form is not served after systemctl reload: $out"
pass

# 6b2. Root's check judges the files for the service's user (helper-49: a root-only 0600
# catalogue passed root's check, then the reload failed with Permission denied).
ns_exec bash -c 'printf "login.done = Connecté\n" > /etc/signupd/messages.d/fr.messages && chmod 0600 /etc/signupd/messages.d/fr.messages'
if out=$(ns_exec signupd --check-config 2>&1); then fail "root's --check-config passed a catalogue signupd's user cannot read: $out"; fi
echo "$out" | grep -q "fr.messages: uid [0-9]* that signupd runs as cannot read it (mode 0600" || fail "root's --check-config did not say signupd's user cannot read it: $out"
ns_exec rm -f /etc/signupd/messages.d/fr.messages

# 6d. An operator's typo (issue 27). A reload of a broken forms.d fails (non-zero) and changes
# nothing. A restart into it keeps alice's open form, which goes on in the new process on the
# last configuration that loaded. signupd.socket stays active; status and the journal say
# why. A start after a stop does the same, and a reload of the fixed file ends it.
printf '[form]\nname = typo\n' | ns_exec tee /etc/signupd/forms.d/zz-typo.form >/dev/null
running=$(show MainPID)
if out=$(ns_exec systemctl reload signupd.service 2>&1); then fail "systemctl reload of a broken forms.d exited 0"; fi
[ "$(show MainPID)" = "$running" ] && [ "$(show ActiveState)" = active ] || fail "a refused reload changed the service: $(show ActiveState) $(show MainPID)"
# Why, at err: what `journalctl -p warning` shows an operator (helper-49: it was at info).
ns_exec journalctl -u signupd.service -p err --no-pager | grep -q "zz-typo.form:" ||
  fail "the refused reload's reason is not in the journal at err: $(ns_exec journalctl -u signupd.service -n 8 --no-pager -o verbose | grep -E 'PRIORITY|MESSAGE=' | tail -8)"
ns_exec rm -f /tmp/keeper.fifo /tmp/keeper.out && ns_exec mkfifo -m 0666 /tmp/keeper.fifo || fail "mkfifo"
ns_exec bash -c "runuser -u alice -- python3 $TESTS/packaged_operator.py keep-form /run/signupd/signupd.sock /tmp/keeper.fifo > /tmp/keeper.out 2>&1 &"
for _ in $(seq 1 100); do ns_exec grep -q "^open" /tmp/keeper.out 2>/dev/null && break; sleep 0.1; done  # polling the keeper's output file
ns_exec grep -q "^open" /tmp/keeper.out || fail "alice's form did not open: $(ns_exec cat /tmp/keeper.out)"
ns_exec systemctl restart signupd.service || fail "systemctl restart into a broken forms.d: $(ns_exec journalctl -u signupd.service -n 20 --no-pager 2>&1)"
[ "$(show MainPID)" != "$running" ] || fail "systemctl restart kept the old process"
ns_exec bash -c 'echo go > /tmp/keeper.fifo'
for _ in $(seq 1 150); do ns_exec grep -Eq "^(kept|lost|not opened)" /tmp/keeper.out 2>/dev/null && break; sleep 0.1; done  # polling the keeper's output file
ns_exec grep -q "^kept" /tmp/keeper.out || fail "alice's form did not survive a restart into a broken forms.d: $(ns_exec cat /tmp/keeper.out)"
[ "$(ns_exec systemctl is-active signupd.socket)" = active ] || fail "signupd.socket is $(ns_exec systemctl is-active signupd.socket) after a restart into a broken forms.d"
out=$(ns_exec signupctl status 2>&1) || fail "signupctl status on the last good forms: $out"
echo "$out" | grep -Eq "forms.d/messages.d have [0-9]+ errors?; serving the last configuration that loaded" || fail "signupctl status does not say the last good forms are served: $out"
echo "$out" | grep -q "zz-typo.form" || fail "signupctl status (root) does not name the broken file: $out"
out=$(as alice signupctl describe 2>&1) && echo "$out" | grep -q "email-signup" || fail "the last good forms lack the operator's form: $out"
ns_exec systemctl stop signupd.service
out=$(as alice signupctl ping 2>&1) || fail "alice's ping, starting the service into a broken forms.d: $out"
[ "$(show ActiveState)" = active ] && [ "$(ns_exec systemctl is-active signupd.socket)" = active ] || fail "after a start into a broken forms.d: service $(show ActiveState), socket $(ns_exec systemctl is-active signupd.socket)"
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  ns_exec journalctl -u signupd.service --no-pager 2>/dev/null | grep -q "zz-typo.form:.*serving the last configuration that loaded" || fail "the journal does not say why the last good forms are served"
fi
echo "$(show StatusText)" | grep -q "serving the last configuration" || fail "systemctl status does not say the last good forms are served: $(show StatusText)"
ns_exec rm /etc/signupd/forms.d/zz-typo.form
ns_exec systemctl reload signupd.service || fail "systemctl reload of the fixed forms.d"
for _ in $(seq 1 50); do ns_exec signupctl status 2>&1 | grep -q "serving the last" || break; sleep 0.1; done  # reload is asynchronous: polled
out=$(ns_exec signupctl status 2>&1)
! echo "$out" | grep -q "serving the last" || fail "after the fixed reload, status still says the last good forms are served: $out"
pass

# 6c. The web bridge, as README's "Sign up in a browser" sets it up: the package leaves it
# off; enabled, it starts on the first request as its own user, in signupd-bridges, and signupd
# counts each visitor as a client of its own (the journal names the client).
[ "$(ns_exec systemctl is-enabled signupd-web.socket 2>&1)" = disabled ] || fail "the package enabled signupd-web.socket"
[ "$(ns_exec systemctl is-active signupd-web.socket 2>&1)" = inactive ] || fail "the package started signupd-web.socket"
ns_exec systemctl enable --now signupd-web.socket >/dev/null 2>&1 || fail "systemctl enable --now signupd-web.socket"
out=$(ns_exec python3 $TESTS/packaged_bridge.py http://127.0.0.1:8080 webvisitor 'a browser visit 42' 2>&1) || fail "the packaged web bridge: $out"
web_pid=$(ns_exec systemctl show -p MainPID --value signupd-web.service)
[ "$(ns_exec ps -o user= -p "$web_pid")" = signupd-web ] || fail "signupd-web does not run as signupd-web"
ns_exec grep -Eq "^Groups:.* $(ns_exec getent group signupd-bridges | cut -d: -f3)( |$)" /proc/"$web_pid"/status || fail "signupd-web is not in signupd-bridges"
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  ns_exec journalctl -u signupd.service --no-pager 2>/dev/null | grep -q "client=web-" || fail "signupd's journal does not name the web visitor's client"
fi
out=$(ns_exec env MANPAGER=cat MANWIDTH=80 man 8 signupd-web 2>&1) || fail "man 8 signupd-web: $out"
ns_exec test -s /usr/share/doc/signupd/examples/nginx-signupd-web.conf || fail "no nginx site in /usr/share/doc/signupd/examples"
ns_exec systemctl disable --now signupd-web.socket signupd-web.service >/dev/null 2>&1 || fail "systemctl disable --now signupd-web"
pass

# 7. The administrator shortens the idle exit with a drop-in, as README says (systemctl edit).
ns_exec mkdir -p /etc/systemd/system/signupd.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/signupd --idle-exit 2 --max-connections 8 --max-connections-per-user 8\n' | ns_exec tee /etc/systemd/system/signupd.service.d/override.conf >/dev/null
ns_exec systemctl daemon-reload || fail "daemon-reload"
ns_exec systemctl restart signupd.service || fail "systemctl restart signupd"
out=$(as alice signupctl ping 2>&1) || fail "alice's ping after systemctl restart: $out"
# A full server (the drop-in's --max-connections 8): alice holds all 8, root's connection
# displaces one of hers, and the journal says so with her uid and her holder's pid.
ns_exec rm -f /tmp/holder.out
ns_exec bash -c "runuser -u alice -- python3 $TESTS/packaged_operator.py hold /run/signupd/signupd.sock 8 20 > /tmp/holder.out 2>&1 &"
for _ in $(seq 1 100); do ns_exec grep -q holding /tmp/holder.out 2>/dev/null && break; sleep 0.1; done  # polling the holder's output file
ns_exec grep -q holding /tmp/holder.out || fail "alice's holder did not take the 8 connections: $(ns_exec cat /tmp/holder.out)"
out=$(ns_exec signupctl ping 2>&1) || fail "root's ping on a full server: $out"
for _ in $(seq 1 100); do ns_exec grep -q closed /tmp/holder.out 2>/dev/null && break; sleep 0.1; done  # the holder prints when a connection is closed
ns_exec grep -q "displaced" /tmp/holder.out || fail "alice's connection was not displaced: $(ns_exec cat /tmp/holder.out)"
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  line=$(ns_exec journalctl -u signupd.service --no-pager 2>/dev/null | grep "displaced:" | tail -1)
  echo "$line" | grep -q "uid=$alice_uid" && echo "$line" | grep -Eq " pid=[0-9]+" || fail "the displacement is not in the plain journal with uid and pid: $line"
fi
ns_exec pkill -u alice -f packaged_operator.py
wait_for ActiveState inactive || fail "the service did not exit when idle after the holder left"
ns_exec systemctl start signupd.socket >/dev/null 2>&1
out=$(as alice signupctl ping 2>&1) || fail "alice's ping after the displacement check: $out"
wait_for ActiveState inactive || fail "the service did not exit when idle"
[ "$(show Result)" = success ] || fail "idle exit was not clean: $(show Result)"
out=$(printf 'p4ssword\n' | as alice signupctl login --username alice --password-stdin 2>&1) || fail "alice's login after idle exit: $out"
[ "$(show ActiveState)" = active ] || fail "the service was not started again on demand"
[ "$(show NRestarts)" = 0 ] || fail "the service restarted after a failure"
pass

# 7b. An https availability service, set up as README says ("The availability service over
# https"): first with the CA file in /etc/signupd, then through the system's trust store in
# /etc/ssl/certs — both must be readable by the sandboxed service (ProtectSystem=strict,
# ProtectHome=yes, PrivateTmp=yes). The service listens on localhost (IPAddressAllow=).
tls=/var/tmp/signupd-tls
ns_exec mkdir -p $tls || fail "mkdir $tls"
ns_exec openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=signupd boot test CA" -keyout $tls/ca.key -out $tls/ca.pem \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign >/dev/null 2>&1 || fail "openssl: the test CA"
ns_exec openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout $tls/server.key -out $tls/server.csr >/dev/null 2>&1 || fail "openssl: the server key"
ns_exec bash -c "printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n' > $tls/server.ext" || fail "server.ext"
ns_exec openssl x509 -req -in $tls/server.csr -CA $tls/ca.pem -CAkey $tls/ca.key -CAcreateserial -days 2 -extfile $tls/server.ext -out $tls/server.pem >/dev/null 2>&1 || fail "openssl: the server certificate"
ns_exec install -m 0644 $tls/ca.pem /etc/signupd/availability-ca.pem || fail "installing the CA file in /etc/signupd"
exec {service_out}< <(timeout -s KILL 300 nsenter -t "$PID1" -a python3 $TESTS/https_service.py $tls/server.pem $tls/server.key 2>&1)
read -r -t 30 -u $service_out https_port https_pid || fail "the https availability service did not start"
case "$https_port" in ''|*[!0-9]*) fail "the https availability service did not start: $https_port" ;; esac
availability_dropin() {
  printf '[Service]\nExecStart=\nExecStart=/usr/sbin/signupd --idle-exit 2 --availability-url https://localhost:%s/users/{username}%s\n' "$https_port" "$1" \
    | ns_exec tee /etc/systemd/system/signupd.service.d/override.conf >/dev/null
  ns_exec systemctl daemon-reload || fail "daemon-reload"
  ns_exec systemctl restart signupd.service || fail "systemctl restart signupd with an https availability URL: $(ns_exec journalctl -u signupd.service -n 5 --no-pager)"
}
availability_dropin " --availability-ca-file /etc/signupd/availability-ca.pem"
out=$(printf 'p4ssword\n' | as alice signupctl signup --username takenbob --password-stdin 2>&1); code=$?
[ $code = 2 ] && echo "$out" | grep -q "Username already taken" || fail "https with the CA file in /etc/signupd: takenbob got exit $code: $out"
out=$(printf 'p4ssword\n' | as alice signupctl signup --username freecarol --password-stdin 2>&1) || fail "https with the CA file in /etc/signupd: freecarol: $out"
# Without the CA file the system's store does not know the test CA: refused, logged once.
availability_dropin ""
out=$(printf 'p4ssword\n' | as alice signupctl signup --username freedave --password-stdin 2>&1); code=$?
[ $code != 0 ] && echo "$out" | grep -q "Error contacting server" || fail "https, CA unknown to the system's store: freedave got exit $code: $out"
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  ns_exec journalctl -u signupd.service -o verbose --no-pager -q | grep -q "SIGNUPD_CAUSE=the service's certificate is not signed by a trusted CA" \
    || fail "the untrusted certificate is not logged with its reason: $(ns_exec journalctl -u signupd.service -n 5 --no-pager)"
  # And plain `journalctl -u signupd` shows the reason too, not only -o verbose (quoted
  # when it holds a comma, an equals sign, a parenthesis or a quote).
  ns_exec journalctl -u signupd.service --no-pager -q | grep "availability service unreachable" | grep -Eq "cause=\"?the service's certificate is not signed by a trusted CA" \
    || fail "plain journalctl does not show why the service is unreachable: $(ns_exec journalctl -u signupd.service -n 5 --no-pager)"
fi
# The administrator adds the CA to the system's store (ca-certificates): /etc/ssl/certs.
ns_exec install -m 0644 $tls/ca.pem /usr/local/share/ca-certificates/signupd-boot-test.crt || fail "installing the CA in the system's store"
ns_exec update-ca-certificates >/dev/null 2>&1 || fail "update-ca-certificates"
ns_exec systemctl restart signupd.service || fail "systemctl restart signupd"
out=$(printf 'p4ssword\n' | as alice signupctl signup --username freedave --password-stdin 2>&1) || fail "https through the system's trust store (/etc/ssl/certs): freedave: $out"
ns_exec kill "$https_pid"
exec {service_out}<&-
ns_exec rm -f /usr/local/share/ca-certificates/signupd-boot-test.crt /etc/signupd/availability-ca.pem
ns_exec update-ca-certificates --fresh >/dev/null 2>&1
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/signupd --idle-exit 2\n' | ns_exec tee /etc/systemd/system/signupd.service.d/override.conf >/dev/null
ns_exec systemctl daemon-reload || fail "daemon-reload"
ns_exec systemctl restart signupd.service || fail "systemctl restart signupd"
pass

# 8. A newer package is installed while alice pings in a loop: no ping fails (connections
# wait in the socket's queue while the service restarts), and the accounts survive. The
# loop pings about 50 times a second, as a busy monitor might: a tighter one is refused by
# design (--max-connects-per-user-per-second, 100), which is not what this step checks.
before=$(show MainPID)
ns_exec rm -f /tmp/upgrade-done
ns_exec runuser -u alice -- env -i PATH=/usr/bin:/bin bash -c '
  n=0; failed=0
  while [ ! -e /tmp/upgrade-done ] && [ $n -lt 5000 ]; do
    signupctl ping >/dev/null 2>>/tmp/ping-errors || failed=$((failed + 1)); n=$((n + 1))
    sleep 0.02
  done
  echo "$n $failed" > /tmp/ping-count' &
PINGER=$!
for _ in $(seq 1 100); do [ "$(show ActiveState)" = active ] && break; sleep 0.05; done
out=$(ns_exec env DEBIAN_FRONTEND=noninteractive apt-get install -y -q /run/sandbox-pkg/signupd_newer.deb 2>&1) || fail "apt install of the newer package: $out"
ns_exec touch /tmp/upgrade-done
wait $PINGER
read -r pings failed < <(ns_exec cat /tmp/ping-count)
[ "${failed:-x}" = 0 ] || fail "$failed of $pings pings failed during the upgrade: $(ns_exec head -3 /tmp/ping-errors)"
[ "${pings:-0}" -ge 10 ] || fail "only ${pings:-0} pings ran during the upgrade"
[ "$(show MainPID)" != "$before" ] || fail "the upgrade did not restart the running service"
ns_exec dpkg-query -W -f='${Version}' signupd | grep -q boottest1 || fail "the newer package is not installed"
out=$(printf 'p4ssword\n' | as alice signupctl login --username alice --password-stdin 2>&1) || fail "alice's account did not survive the upgrade: $out"
pass

# 8b. Sessions survive a restart and an upgrade (issue 16): 50 clients mid-form, three views
# of one session, one signup hashing; then `systemctl restart`, and separately installing
# the package again: no bye, seq without gap or repeat, keystrokes sent meanwhile answered
# in order, every signup done. `systemctl stop` says bye shutdown; kill -9 leaves the next
# process to close the stored connections with bye restarted.
HANDOVER="python3 $TESTS/restart_handover.py"
out=$(ns_exec $HANDOVER carry 2>&1) || fail "only connections holding a session are stored: $out"
out=$(ns_exec $HANDOVER churn 20 2>&1) || fail "short connections across restarts: $out"
out=$(ns_exec $HANDOVER fair 2>&1) || fail "the restart store shared fairly (issue 27): $out"
fair_note=$(echo "$out" | tail -1)
# --long (BOOT_TEST_LONG=1, from scripts/test.sh --long): the same two attacks at the sizes
# of issue 27's trial under the packaged defaults: 17 uids x 256 connections take every
# place; 5 uids x 256 x 16 maximal sessions make ~250 MB of state.
if [ -n "${BOOT_TEST_LONG:-}" ]; then
  for which in places state; do
    out=$(ns_exec $HANDOVER fair-long $which 2>&1) || fail "the restart shared fairly at the trial's size ($which): $out"
    fair_note="$fair_note; $(echo "$out" | tail -1)"
  done
fi
out=$(ns_exec $HANDOVER restart 2>&1) || fail "sessions across systemctl restart: $out"
handover_note=$(echo "$out" | tail -1)
out=$(ns_exec env RESTART_COMMAND="DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall /run/sandbox-pkg/signupd_newer.deb" $HANDOVER restart 2>&1) || fail "sessions across a package upgrade: $out"
out=$(ns_exec $HANDOVER resume 2>&1) || fail "resume across systemctl restart (issue 23): $out"
resume_note=$(echo "$out" | tail -1)
out=$(ns_exec $HANDOVER stop 2>&1) || fail "systemctl stop with clients: $out"
restarts_before=$(show NRestarts)
out=$(ns_exec $HANDOVER kill9 2>&1) || fail "kill -9 with clients: $out"
[ "$(show NRestarts)" -gt "$restarts_before" ] || fail "kill -9 was not followed by an automatic restart"
out=$(ns_exec $HANDOVER corrupt 2>&1) || fail "a damaged handover state: $out"
journal=$(ns_exec journalctl -u signupd.service -o verbose --no-pager 2>/dev/null)
! echo "$journal" | grep -q "Tr0ub4dor" || fail "a password typed before a restart reached the journal"
pass

# 9. Purge removes the service, the socket and the state.
out=$(ns_exec env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q signupd 2>&1) || fail "apt purge: $out"
ns_exec test ! -e /var/lib/signupd || fail "purge left /var/lib/signupd"
ns_exec test ! -e /run/signupd/signupd.sock || fail "removal left the socket"
[ "$(ns_exec systemctl is-active signupd.socket)" != active ] || fail "signupd.socket still active after purge"
pass
# The administrator's own drop-in is theirs to remove (a purge leaves /etc/systemd alone).
ns_exec rm -rf /etc/systemd/system/signupd.service.d

# 10. The README's by-hand alternative, line by line from its code block, on the same
# machine (the user and group a purge leaves behind are reused, as they would be). The
# block's own build lines ran on the build host: scripts/build-deb.sh made .build/release.
byhand=$(awk '/^### Without the package/{f=1} f&&/^```sh/{b=1;next} b&&/^```/{exit} b' "$HERE/README.md")
[ -n "$byhand" ] || fail "README.md has no by-hand block under 'Without the package'"
while IFS= read -r line; do
  cmd=${line%%#*}
  case "$cmd" in ""|scripts/install-deps.sh*|"swift build"*) continue ;; esac
  out=$(ns_exec bash -c "cd $SRC && $cmd" 2>&1) || fail "README by-hand step failed: $cmd: $out"
done <<< "$byhand"
out=$(as alice signupctl ping 2>&1) || fail "alice's ping after the by-hand install: $out"
[ "$(ns_exec stat -c '%U %a' /var/lib/signupd/accounts.sqlite)" = "signupd 600" ] || fail "by hand, accounts.sqlite is $(ns_exec stat -c '%U %a' /var/lib/signupd/accounts.sqlite)"
out=$(as bob signupctl ping 2>&1); code=$?
[ $code = 3 ] || fail "by hand, bob (not a member) got exit $code, not 3"
pass

echo "PASS: systemd boot test, installed from the package ($checks groups: socket activation as a group member, refusal naming the group, root, private state, $pin_note, status counts, $journal_note, metrics scraped by a member and refused to a non-member, sign-up paused by root only, a throttled login and a displacement in the journal with uid and pid, man pages and completions, the web bridge enabled and used without script as its own user, an operator form live after reload, a broken forms.d refused by reload (non-zero) and survived by restart and start (the open form kept, the socket active, the last good forms served and said), idle exit, restart, upgrade under $pings pings with none failed, sessions across restart and upgrade ($handover_note), $resume_note, $fair_note, stop says bye shutdown, kill -9 says bye restarted, a damaged state says so in bye, purge, the README's by-hand install)"
