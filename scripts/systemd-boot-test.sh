#!/usr/bin/env bash
# Boots a real systemd as PID 1 in private namespaces with signupd's own units, and checks
# what an administrator would see: the first connection starts the service, StatusText
# shows the counts, a signup works, and after exiting idle the service starts again on
# demand. Needs root and a kernel that allows the namespaces; otherwise it says why and
# exits 0 as skipped ("SKIP: ..." on stdout).
#
# usage: scripts/systemd-boot-test.sh path/to/signupd path/to/signupctl
set -u
BIN=$(realpath "$1"); CTL=$(realpath "$2")
HERE=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "SKIP: $*"; exit 0; }
fail() { echo "FAIL: $*"; [ -f "$STATE/console.log" ] && tail -20 "$STATE/console.log"; ns_exec journalctl --no-pager -u signupd.service 2>/dev/null | tail -30; down; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root to boot systemd in namespaces"
command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "unshare/nsenter missing"
[ -x /lib/systemd/systemd ] || skip "systemd is not installed"
if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && [ -z "${FORCE_SANDBOX:-}" ]; then
  : # systemd is PID 1 on the host: the sandbox still works, it just is not the only way
fi

STATE=$(mktemp -d /tmp/signupd-systemd.XXXXXX)
CG=signupd-test-$$
UNITS=$STATE/units
mkdir -p "$UNITS/signupd.service.d" "$UNITS/signupd.socket.d"
cp "$HERE/systemd/signupd.socket" "$HERE/systemd/signupd.service" "$UNITS/"
# Test-only drop-ins: the binary from this build, fast idle exit, and root as the socket
# group (the sandbox's /etc is the host's, read-only, without the signupd group).
cat > "$UNITS/signupd.service.d/test.conf" <<UNIT
[Service]
ExecStart=
ExecStart=/run/sandbox-bin/signupd --idle-exit 2
UNIT
cat > "$UNITS/signupd.socket.d/test.conf" <<UNIT
[Socket]
SocketGroup=root
UNIT
cat > "$UNITS/sandbox.target" <<UNIT
[Unit]
Description=signupd test sandbox
Requires=basic.target
After=basic.target
Wants=signupd.socket systemd-journald.socket
UNIT

cat > "$STATE/init.sh" <<INIT
#!/bin/bash
set -e
mount --make-rprivate /
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/systemd/system /run/lock /run/sandbox-units /run/sandbox-nogen /run/sandbox-bin
for u in sysinit basic sockets timers paths slices shutdown poweroff final umount exit halt local-fs local-fs-pre swap; do
  cp /lib/systemd/system/\$u.target /run/sandbox-units/; done
cp /lib/systemd/system/systemd-{poweroff,exit,halt}.service /run/sandbox-units/
# journald too, so the service's log lands where an administrator would read it.
cp /lib/systemd/system/systemd-journald{.service,.socket,-dev-log.socket} /run/sandbox-units/
cp -r $UNITS/* /run/sandbox-units/
cp $BIN /run/sandbox-bin/signupd
mount -t tmpfs tmpfs /var/log
# All of /var/lib is private: DynamicUser= creates /var/lib/signupd -> private/signupd,
# which must not appear on the host.
mount -t tmpfs -o mode=755 tmpfs /var/lib
mkdir -p /var/lib/systemd /var/lib/private && chmod 700 /var/lib/private
mount --bind /etc /etc && mount -o remount,bind,ro /etc
: > $STATE/console.log; mount --bind $STATE/console.log /dev/console
mount -t tmpfs tmpfs /tmp; mount -t tmpfs tmpfs /var/tmp
umount -R /sys/fs/cgroup 2>/dev/null || true
mount -t tmpfs -o mode=755 cgroup_root /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
exec env -i container=signupd-test PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_UNIT_PATH=/run/sandbox-units SYSTEMD_GENERATOR_PATH=/run/sandbox-nogen SYSTEMD_ENVIRONMENT_GENERATOR_PATH=/run/sandbox-nogen /lib/systemd/systemd --system --unit=sandbox.target
INIT
chmod +x "$STATE/init.sh"

bash -c "for h in systemd unified; do mkdir -p /sys/fs/cgroup/\$h/$CG 2>/dev/null && echo \$\$ > /sys/fs/cgroup/\$h/$CG/cgroup.procs 2>/dev/null; done
         exec timeout -s KILL 240 unshare --pid --fork --mount --mount-proc --uts --ipc --net --cgroup --kill-child=SIGKILL $STATE/init.sh" > "$STATE/out.log" 2>&1 &
WRAPPER=$!
PID1=
for _ in $(seq 1 100); do
  u=$(pgrep -P $WRAPPER -x unshare) && p=$(pgrep -P "$u") && PID1=$p && \
    s=$(timeout 5 nsenter -t "$p" -a systemctl is-system-running 2>/dev/null) && { [ "$s" = running ] || [ "$s" = degraded ]; } && break
  kill -0 $WRAPPER 2>/dev/null || break
  sleep 0.1  # polling the boot of a separate init: there is no event to wait on from outside
done
ns_exec() { timeout 30 nsenter -t "$PID1" -a "$@"; }
down() {
  [ -n "$PID1" ] && timeout 10 nsenter -t "$PID1" -a systemctl poweroff >/dev/null 2>&1
  for _ in $(seq 1 50); do kill -0 $WRAPPER 2>/dev/null || break; sleep 0.1; done
  kill -KILL $WRAPPER 2>/dev/null; wait $WRAPPER 2>/dev/null
  for h in systemd unified; do find /sys/fs/cgroup/$h/$CG -depth -type d -exec rmdir {} \; 2>/dev/null; done
}
state=$(ns_exec systemctl is-system-running 2>/dev/null)
if [ "$state" != running ] && [ "$state" != degraded ]; then
  reason=$(tail -3 "$STATE/out.log" | tr '\n' ' ')
  down; skip "systemd did not boot in namespaces here (${state:-no answer}): $reason"
fi

SOCK=/proc/$PID1/root/run/signupd/signupd.sock
show() { ns_exec systemctl show -p "$1" --value signupd.service; }
[ "$(ns_exec systemctl is-active signupd.socket)" = active ] || fail "signupd.socket is not listening"
[ "$(show ActiveState)" = inactive ] || fail "signupd.service started before any connection"

# 1. The first connection starts the service; a signup works through it.
out=$(printf '%s\n' '{"op":"ping","id":1}' | timeout 20 "$CTL" raw --socket "$SOCK" 2>&1) || fail "first connection: $out"
echo "$out" | grep -q '"event":"hello"' || fail "no hello on first connection: $out"
[ "$(show ActiveState)" = active ] || fail "the first connection did not start signupd.service"
printf 'p4ssword\n' | timeout 30 "$CTL" signup --socket "$SOCK" --username sandboxuser --password-stdin >/dev/null || fail "signup through systemd failed"

# 2. StatusText shows the counts.
status=""
for _ in $(seq 1 30); do
  status=$(show StatusText); echo "$status" | grep -q "1 signups" && break; sleep 0.2  # STATUS= is refreshed once a second
done
echo "$status" | grep -Eq '[0-9]+ connections, [0-9]+ sessions, 1 signups' || fail "StatusText does not show the counts: $status"

# 3. With no connections it exits 0 after --idle-exit; the next connection starts it again.
for _ in $(seq 1 100); do [ "$(show ActiveState)" = inactive ] && break; sleep 0.1; done
[ "$(show ActiveState)" = inactive ] || fail "service did not exit when idle"
[ "$(show Result)" = success ] || fail "idle exit was not a clean exit: $(show Result)"
out=$(printf 'p4ssword\n' | timeout 30 "$CTL" login --socket "$SOCK" --username sandboxuser --password-stdin 2>&1) || fail "login after idle exit: $out"
[ "$(show ActiveState)" = active ] || fail "service was not started again on demand"
[ "$(show NRestarts)" = 0 ] || fail "service restarted after a failure"

# 4. The log went to the journal with structured fields (when journald runs in the sandbox).
if [ "$(ns_exec systemctl is-active systemd-journald.service)" = active ]; then
  journal=$(ns_exec journalctl -u signupd.service -o verbose --no-pager 2>/dev/null)
  echo "$journal" | grep -q "MESSAGE=account created" || fail "no 'account created' entry in the journal"
  echo "$journal" | grep -q "SIGNUPD_USER=sandboxuser" || fail "the journal entry lacks its SIGNUPD_USER field"
  ! echo "$journal" | grep -q "p4ssword" || fail "the password reached the journal"
  journal_note=", structured journal entries"
else
  journal_note=" (journald did not start here: journal not checked)"
fi

down
[ "$(readlink /var/lib/signupd 2>/dev/null)" != private/signupd ] || fail "the sandbox leaked DynamicUser's /var/lib/signupd symlink onto the host"
echo "PASS: systemd boot test (socket activation, StatusText, signup, idle exit, restart on demand$journal_note)"
rm -rf "$STATE"
