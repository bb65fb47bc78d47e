#include "csystemd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

// The library of the headers' ABI: libsystemd0 has kept its soname since systemd 209.
#define SYSTEMD_LIBRARY "libsystemd.so.0"

#define SYSTEMD_FUNCTIONS(X)                                                                   \
    X(sd_listen_fds) X(sd_notify) X(sd_notify_barrier) X(sd_watchdog_enabled) X(sd_journal_sendv) \
    X(sd_pid_notify_with_fds)

#define SYSTEMD_POINTER(name) static __typeof__(&name) systemd_##name;
SYSTEMD_FUNCTIONS(SYSTEMD_POINTER)

static int systemdLoaded;
static char systemdError[512];
static pthread_once_t systemdOnce = PTHREAD_ONCE_INIT;

static void loadSystemd(void) {
    void *library = dlopen(SYSTEMD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(systemdError, sizeof systemdError, "cannot open %s: %s", SYSTEMD_LIBRARY, why ? why : "unknown error");
        return;
    }
#define SYSTEMD_RESOLVE(name)                                                                   \
    systemd_##name = (__typeof__(systemd_##name))dlsym(library, #name);                         \
    if (systemd_##name == NULL) {                                                               \
        snprintf(systemdError, sizeof systemdError, "%s has no %s", SYSTEMD_LIBRARY, #name);    \
        return;                                                                                 \
    }
    SYSTEMD_FUNCTIONS(SYSTEMD_RESOLVE)
    systemdLoaded = 1;
}

int csystemd_load(void) {
    pthread_once(&systemdOnce, loadSystemd);
    return systemdLoaded;
}

const char *csystemd_error(void) {
    return csystemd_load() ? NULL : systemdError;
}

// Each call opens the library at the first, then goes through its pointer.
#define SYSTEMD_MISSING (-ELIBACC)

int csystemd_listen_fds(int unset_environment) {
    return csystemd_load() ? systemd_sd_listen_fds(unset_environment) : SYSTEMD_MISSING;
}

int csystemd_notify(int unset_environment, const char *state) {
    return csystemd_load() ? systemd_sd_notify(unset_environment, state) : SYSTEMD_MISSING;
}

int csystemd_notify_barrier(int unset_environment, uint64_t timeout) {
    return csystemd_load() ? systemd_sd_notify_barrier(unset_environment, timeout) : SYSTEMD_MISSING;
}

int csystemd_watchdog_enabled(int unset_environment, uint64_t *usec) {
    return csystemd_load() ? systemd_sd_watchdog_enabled(unset_environment, usec) : SYSTEMD_MISSING;
}

int csystemd_journal_sendv(const struct iovec *iov, int n) {
    return csystemd_load() ? systemd_sd_journal_sendv(iov, n) : SYSTEMD_MISSING;
}

int csystemd_fdstore_add(int fd, const char *name) {
    char state[320];
    int n = snprintf(state, sizeof state, "FDSTORE=1\nFDNAME=%s", name);
    if (n < 0 || (size_t)n >= sizeof state) return -EINVAL;
    return csystemd_load() ? systemd_sd_pid_notify_with_fds(0, 0, state, &fd, 1) : SYSTEMD_MISSING;
}

int csystemd_fdstore_remove(const char *name) {
    char state[320];
    int n = snprintf(state, sizeof state, "FDSTOREREMOVE=1\nFDNAME=%s", name);
    if (n < 0 || (size_t)n >= sizeof state) return -EINVAL;
    return csystemd_notify(0, state);
}
