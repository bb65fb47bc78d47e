#define _GNU_SOURCE
#include "signupd_phone_library.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char library_name[] = "libsignupd-phone.so";

int signupd_phone_library_locate(char *path, size_t path_size) {
    char directory[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", directory, sizeof directory - 1);
    if (length <= 0) {
        snprintf(path, path_size, "cannot read /proc/self/exe to find %s", library_name);
        return 0;
    }
    directory[length] = 0;
    char *slash = strrchr(directory, '/');
    if (slash == NULL) {
        snprintf(path, path_size, "cannot find %s: /proc/self/exe is %s", library_name, directory);
        return 0;
    }
    *slash = 0;
    snprintf(path, path_size, "%s/%s", directory, library_name);
    if (access(path, R_OK) == 0) return 1;
    snprintf(path, path_size, "%s/../lib/signupd/%s", directory, library_name);
    if (access(path, R_OK) == 0) return 1;
    snprintf(path, path_size, "%s is neither in %s nor in %s/../lib/signupd (install it with signupd)", library_name, directory, directory);
    return 0;
}

static signupd_phone_functions functions;
static const signupd_phone_functions *opened;
static char failure[PATH_MAX + 512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void) {
    char path[PATH_MAX + 256];
    if (!signupd_phone_library_locate(path, sizeof path)) {
        snprintf(failure, sizeof failure, "%s", path);
        return;
    }
    /* RTLD_LOCAL: its symbols (and libphonenumber's) stay out of everyone else's lookups. */
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(failure, sizeof failure, "cannot open %s: %s", path, dlerror());
        return;
    }
    functions.parse = (signupd_phone_status (*)(const char *, const char *, char *, size_t, int *, int *))dlsym(handle, "signupd_phone_parse");
    functions.region_is_known = (int (*)(const char *))dlsym(handle, "signupd_phone_region_is_known");
    if (functions.parse == NULL || functions.region_is_known == NULL) {
        snprintf(failure, sizeof failure, "%s lacks signupd_phone_parse or signupd_phone_region_is_known: another version's?", path);
        return;
    }
    opened = &functions;
}

const signupd_phone_functions *signupd_phone_library_open(const char **why) {
    pthread_once(&once, open_once);
    if (opened == NULL && why != NULL) *why = failure;
    return opened;
}
