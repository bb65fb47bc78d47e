#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

// --- libsystemd, opened at its first use (csystemd.c). ---
// signupd is not linked with libsystemd: mapping and relocating it and the six libraries it
// needs (libgcrypt, libgpg-error, liblzma, libzstd, liblz4, libcap) was 0.6-0.8 ms of every
// socket-activated start (issue 29), and nothing before the first `hello` needs it: the
// passed sockets are read without it (SystemdListenFDs.swift). Under systemd, the daemon
// opens it once the socket is served, beside the first greetings (SignupServer); a start
// outside systemd (systemd-socket-activate, by hand) never opens it. The calls are libsystemd's own (sd-daemon(3), sd_journal_sendv(3)),
// with its return values; when the library cannot be opened, each returns -ELIBACC and
// `csystemd_error` says why.

/// SD_LISTEN_FDS_START (sd-daemon.h): the first descriptor systemd passes.
#define CSYSTEMD_LISTEN_FDS_START 3

/// Opens libsystemd if no call has yet (another caller meanwhile waits): 1 if it is usable, else 0.
int csystemd_load(void);
/// Why libsystemd could not be opened; NULL when it was.
const char *csystemd_error(void);

int csystemd_listen_fds(int unset_environment);
int csystemd_notify(int unset_environment, const char *state);
int csystemd_notify_barrier(int unset_environment, uint64_t timeout);
int csystemd_watchdog_enabled(int unset_environment, uint64_t *usec);
int csystemd_journal_sendv(const struct iovec *iov, int n);

/// Puts `fd` into the service manager's file descriptor store under `name`
/// (FDSTORE=1, FDNAME=name). Returns > 0 on success, 0 without $NOTIFY_SOCKET, -errno on error.
int csystemd_fdstore_add(int fd, const char *name);

/// Removes every stored descriptor named `name` (FDSTOREREMOVE=1, FDNAME=name).
int csystemd_fdstore_remove(const char *name);

// --- Handover across restarts (issue 16): the file descriptor store and sealed memfds. ---
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// Linux's values (uapi linux/fcntl.h, linux/memfd.h): the module is built without _GNU_SOURCE.
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif
#ifndef F_SEAL_SEAL
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#define MFD_ALLOW_SEALING 0x0002U
#endif

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

/// A memfd holding `data`, sealed against any change (shrink, grow, write, further seals):
/// it lives in memory only, is never on a file system, and whoever receives it can trust
/// it does not change under them. Returns the fd, or -errno.
static inline int csystemd_sealed_memfd(const char *name, const void *data, size_t length) {
    int fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -errno;
    const char *bytes = data;
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, bytes + done, length - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            int error = errno;
            close(fd);
            return -error;
        }
        done += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

/// The seals of `fd` (F_GET_SEALS), or -errno (EINVAL: not a memfd).
static inline int csystemd_seals(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals < 0 ? -errno : seals;
}

/// Whether the seals make the file immutable (no write, no shrink, no grow).
static inline int csystemd_fully_sealed(int seals) {
    int wanted = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
    return (seals & wanted) == wanted;
}

/// The kernel's socket cookie (SO_COOKIE): unique per socket for the life of the system.
static inline int csystemd_socket_cookie(int fd, uint64_t *cookie) {
    socklen_t length = sizeof *cookie;
    return getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &length) < 0 ? -errno : 0;
}
// --- Memory given back after floods (issues 27, 29): glibc's malloc_trim. ---
#include <malloc.h>

// --- One event loop per CPU (issue 29): the kernel's affinity calls (the glibc wrappers'
// CPU_SET macros need _GNU_SOURCE). Masks of 1,024 CPUs, as glibc's cpu_set_t. ---

/// The CPUs the calling thread may run on, their ids in `cpus` (at most `max`): how many,
/// or -errno.
static inline int csystemd_allowed_cpus(int *cpus, int max) {
    uint64_t mask[16] = {0};
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (bytes < 0) return -errno;
    int count = 0;
    for (int cpu = 0; cpu < (int)bytes * 8 && cpu < 1024; cpu++) {
        if ((mask[cpu / 64] >> (cpu % 64)) & 1) {
            if (count < max) cpus[count] = cpu;
            count++;
        }
    }
    return count;
}

/// Pins the calling thread to one CPU: 0, or -errno.
static inline int csystemd_pin_current_thread(int cpu) {
    if (cpu < 0 || cpu >= 1024) return -EINVAL;
    uint64_t mask[16] = {0};
    mask[cpu / 64] = (uint64_t)1 << (cpu % 64);
    return syscall(SYS_sched_setaffinity, 0, sizeof mask, mask) < 0 ? -errno : 0;
}

#endif
