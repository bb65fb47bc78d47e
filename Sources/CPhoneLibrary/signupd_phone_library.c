#define _GNU_SOURCE
#include "signupd_phone_library.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <grp.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
    /* Whatever is there, even unreadable or a dangling link: the checks say what is wrong
       with it, which "not there" would hide (helper-29). */
    /* Where it is installed first (/usr/lib/signupd): a stray copy beside an installed
       signupd (/usr/sbin) is not the one opened, and a reinstall repairs what is (helper-31).
       Beside the executable second: a build directory. */
    struct stat info;
    snprintf(path, path_size, "%s/../lib/signupd/%s", directory, library_name);
    if (lstat(path, &info) == 0) return 1;
    snprintf(path, path_size, "%s/%s", directory, library_name);
    if (lstat(path, &info) == 0) return 1;
    snprintf(path, path_size, "%s is neither in %s/../lib/signupd, where it is installed with signupd, nor in %s", library_name, directory, directory);
    return 0;
}

int signupd_phone_library_check_elf(const char *path, char *why, size_t why_size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
        return 0;
    }
    struct stat info;
    Elf64_Ehdr header;
    int ok = 0;
    if (fstat(fd, &info) != 0) {
        snprintf(why, why_size, "cannot inspect %s: %s", path, strerror(errno));
    } else if (pread(fd, &header, sizeof header, 0) != (ssize_t)sizeof header || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0
               || header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr)) {
        snprintf(why, why_size, "%s is not a 64-bit ELF shared object", path);
    } else if (header.e_phoff > (Elf64_Off)info.st_size || (Elf64_Off)header.e_phnum * sizeof(Elf64_Phdr) > (Elf64_Off)info.st_size - header.e_phoff) {
        snprintf(why, why_size, "%s is cut short (%lld bytes): its program headers are not all there", path, (long long)info.st_size);
    } else {
        ok = 1;
        for (Elf64_Half index = 0; index < header.e_phnum && ok; index++) {
            Elf64_Phdr segment;
            if (pread(fd, &segment, sizeof segment, (off_t)(header.e_phoff + (Elf64_Off)index * sizeof segment)) != (ssize_t)sizeof segment) {
                snprintf(why, why_size, "cannot read %s's program headers", path);
                ok = 0;
            } else if ((segment.p_type == PT_LOAD || segment.p_type == PT_DYNAMIC)
                       && (segment.p_offset > (Elf64_Off)info.st_size || segment.p_filesz > (Elf64_Off)info.st_size - segment.p_offset)) {
                snprintf(why, why_size, "%s is cut short (%lld bytes, where its segments need %llu)", path, (long long)info.st_size,
                         (unsigned long long)(segment.p_offset + segment.p_filesz));
                ok = 0;
            }
        }
    }
    close(fd);
    return ok;
}

/* Whether `handle` is signupd's shim over a working libphonenumber: both functions there,
   and known answers for known numbers (helper-30: a library with the two names that
   answered OK with an empty E.164 form for everything made every number one account,
   `tel:`). Fills `into` and returns 1, or returns 0 with why in `why`. */
static int verify(void *handle, signupd_phone_functions *into, char *why, size_t why_size) {
    signupd_phone_functions found;
    found.parse = (signupd_phone_status (*)(const char *, const char *, char *, size_t, int *, int *))dlsym(handle, "signupd_phone_parse");
    found.region_is_known = (int (*)(const char *))dlsym(handle, "signupd_phone_region_is_known");
    if (found.parse == NULL || found.region_is_known == NULL) {
        snprintf(why, why_size, "it lacks signupd_phone_parse or signupd_phone_region_is_known: another program's library, or another version's");
        return 0;
    }
    char e164[32] = "";
    int national_digits = -1, in_region = 0;
    signupd_phone_status status = found.parse("138 0013 8000", "CN", e164, sizeof e164, &national_digits, &in_region);
    int known = status == SIGNUPD_PHONE_OK && strcmp(e164, "+8613800138000") == 0 && national_digits == 11 && in_region == 1;
    char other[32] = "";
    int other_digits = -1, other_in_region = 0;
    known = known && found.parse("+999 1234 5678", "CN", other, sizeof other, &other_digits, &other_in_region) == SIGNUPD_PHONE_INVALID_COUNTRY;
    known = known && found.region_is_known("CN") == 1 && found.region_is_known("QQ") == 0;
    if (!known) {
        snprintf(why, why_size, "it gives wrong answers for numbers whose answers are known (138 0013 8000 in CN: status %d, \"%.20s\"): another version's library, or not libphonenumber", (int)status, e164);
        return 0;
    }
    *into = found;
    return 1;
}

/* The trial's reason, written to the prober before it exits with `code`. */
static void trial_fail(int report, int code, const char *what, const char *detail) {
    char text[1024];
    /* One line on standard error (run by hand); the prober takes the reason as it is. */
    int length = snprintf(text, sizeof text, "%s%s%s%s", what, detail ? ": " : "", detail ? detail : "", report == 2 ? "\n" : "");
    if (length > 0) {
        ssize_t ignored = write(report, text, (size_t)length < sizeof text ? (size_t)length : sizeof text - 1);
        (void)ignored;
    }
    _exit(code);
}

/* What a service manager sends every process of the service (systemctl kill, reload, stop,
   and signupd's own hand-over signal): the trial ignores them, so that it is never reported
   damaged for a signal meant for signupd (helper-34: SIGHUP from `systemctl kill -s HUP`
   during a trial turned phone numbers off until a restart; SIGTERM and SIGUSR1 on stop and
   restart said "damaged" at critical). They are blocked from the spawn until this ignores
   them, so one that arrives meanwhile is dropped. It still ends with signupd. */
static const int service_signals[] = {SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
#define SERVICE_SIGNALS (sizeof service_signals / sizeof service_signals[0])

/* Signals that say the code that ran was at fault: a library that dies of one is damaged.
   Any other end by a signal came from outside (SIGKILL of the whole service, the OOM killer). */
static int is_fault_signal(int signal_number) {
    return signal_number == SIGSEGV || signal_number == SIGBUS || signal_number == SIGILL || signal_number == SIGFPE ||
           signal_number == SIGABRT || signal_number == SIGSYS || signal_number == SIGTRAP;
}

int signupd_phone_library_trial(int argc, char *const argv[]) {
    for (size_t i = 0; i < SERVICE_SIGNALS; i++) signal(service_signals[i], SIG_IGN);
    /* Its reason goes to descriptor 3, the prober's pipe; run by hand, to standard error. */
    struct stat info;
    int report = fstat(3, &info) == 0 && S_ISFIFO(info.st_mode) ? 3 : 2;
    if (argc != 6) trial_fail(report, 64, "usage: signupd --phone-library-trial LIBRARY UID|- GID|- PARENT-PID (signupd runs this itself)", NULL);
    /* Gone with the prober, however it goes (kill -9 included): a trial that hangs outlives
       nobody who would stop it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != (pid_t)strtol(argv[5], NULL, 10)) _exit(6);
    if (strcmp(argv[3], "-") != 0) {
        uid_t uid = (uid_t)strtoul(argv[3], NULL, 10);
        gid_t gid = strcmp(argv[4], "-") != 0 ? (gid_t)strtoul(argv[4], NULL, 10) : (gid_t)uid;
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            trial_fail(report, 5, "cannot become signupd's user to try it", strerror(errno));
    }
    void *handle = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) trial_fail(report, 3, "cannot open it", dlerror());
    signupd_phone_functions found;
    char why_not[512];
    if (!verify(handle, &found, why_not, sizeof why_not)) trial_fail(report, 4, why_not, NULL);
    _exit(0);
}

/* Whether process `pid` is stopped by a signal (state T, or t when traced). */
static int is_stopped(pid_t pid) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0) return 0;
    text[length] = 0;
    /* "pid (comm) state ...": the comm may hold anything, so after its last ')'. */
    char *close_paren = strrchr(text, ')');
    return close_paren != NULL && close_paren[1] == ' ' && (close_paren[2] == 'T' || close_paren[2] == 't');
}

int signupd_phone_library_probe(const char *path, const char *program, uid_t as_uid, gid_t as_gid, char *why, size_t why_size) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot start a process to try %s in: %s", path, strerror(errno));
        return -1;
    }
    /* A new program, not a fork. signupd has threads by now, and after a fork of a process
       with threads only async-signal-safe calls are safe, which dlopen and the library's
       initialisers are not (a lock another thread held at the fork, the allocator's, ICU's
       or a C++ static's, stays held in the copy for ever: one such copy, left from a local
       kill -9 run, sat for an hour in ICU's umtx_initImplPreInit under libphonenumber's
       first regex compile, another thread having held ICU's init mutex at the fork; in a
       signupd not killed, its 10 s ran out and phone numbers were off until a restart). And
       a fork held every descriptor signupd had: a signupd killed while its trial ran left the
       listening socket open in the child, so the next start found it "already served" (the
       kill -9 test in the CI of stop 39; 2 of 4 local runs of 400 kills, two at once). The
       trial gets /dev/null, standard output and error, the pipe as descriptor 3 and nothing
       else, and dies with signupd. */
    char uid_text[24] = "-", gid_text[24] = "-", parent_text[24];
    if (as_uid != (uid_t)-1) {
        snprintf(uid_text, sizeof uid_text, "%u", (unsigned)as_uid);
        snprintf(gid_text, sizeof gid_text, "%u", (unsigned)as_gid);
    }
    snprintf(parent_text, sizeof parent_text, "%d", (int)getpid());
    char *const arguments[] = {"signupd", "--phone-library-trial", (char *)path, uid_text, gid_text, parent_text, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, report[1], 3);
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    posix_spawnattr_init(&attributes);
    sigset_t blocked, defaults;
    sigemptyset(&blocked);
    sigemptyset(&defaults);
    for (size_t i = 0; i < SERVICE_SIGNALS; i++) sigaddset(&blocked, service_signals[i]);
    const int handled[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD};
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) sigaddset(&defaults, handled[i]);
    posix_spawnattr_setsigmask(&attributes, &blocked);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t child;
    int spawned = posix_spawn(&child, program, &actions, &attributes, arguments, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(report[1]);
    if (spawned != 0) {
        snprintf(why, why_size, "cannot start %s to try %s in: %s", program, path, strerror(spawned));
        close(report[0]);
        return -1;
    }
    /* The child holds the pipe's write end (signupd starts no other process, and this runs
       under the load lock): it reads as ended the moment the child has gone, however it went.
       Waited for with poll, not slept on in 10 ms steps: the child's own load takes about
       10 ms, so the steps cost only their rounding, 0.5 ms measured (13.54 -> 13.06 ms to the
       first phone verdict after a start). Bounded: a library that hangs while loading is as
       unusable as one that crashes. */
    char reason[1024];
    size_t have = 0;
    struct timespec began;
    clock_gettime(CLOCK_MONOTONIC, &began);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = 10000 - ((now.tv_sec - began.tv_sec) * 1000 + (now.tv_nsec - began.tv_nsec) / 1000000);
        if (left <= 0) {
            /* Stopped (SIGSTOP, `systemctl kill -s STOP`), it never had its 10 s: not the
               library's fault, tried again (helper-35). Otherwise it hangs while loading. */
            int stopped = is_stopped(child);
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
            close(report[0]);
            if (stopped) {
                snprintf(why, why_size, "the process trying %s was stopped from outside (SIGSTOP) and did not finish within 10 s", path);
                return -1;
            }
            snprintf(why, why_size, "%s did not finish loading in a test process within 10 s", path);
            return 0;
        }
        struct pollfd ready = {.fd = report[0], .events = POLLIN};
        int polled = poll(&ready, 1, (int)left);
        if (polled < 0 && errno != EINTR) {
            snprintf(why, why_size, "cannot wait for the process trying %s: %s", path, strerror(errno));
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
            close(report[0]);
            return -1;
        }
        if (polled <= 0) continue;
        char scratch[256];
        /* Past a full reason, whatever else arrives is read and dropped until the end. */
        int full = have >= sizeof reason - 1;
        ssize_t got = full ? read(report[0], scratch, sizeof scratch) : read(report[0], reason + have, sizeof reason - 1 - have);
        if (got > 0) {
            if (!full) have += (size_t)got;
            continue;
        }
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        break;
    }
    close(report[0]);
    reason[have] = 0;
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, why_size, "cannot wait for the process trying %s: %s", path, strerror(errno));
            return -1;
        }
    }
    if (WIFSIGNALED(status) && !is_fault_signal(WTERMSIG(status))) {
        snprintf(why, why_size, "the process trying %s was ended from outside by signal %d (%s)", path, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WIFSIGNALED(status)) {
        snprintf(why, why_size, "%s is damaged: loading it in a test process killed that process with signal %d (%s)", path,
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
        return 0;
    }
    if (WEXITSTATUS(status) != 0) {
        snprintf(why, why_size, "%s: %s%s", path, reason[0] ? reason : "a test process could not use it",
                 as_uid != (uid_t)-1 ? " (tried as signupd's user)" : "");
        return 0;
    }
    return 1;
}

static signupd_phone_functions functions;
static const signupd_phone_functions *opened;
static char failure[PATH_MAX + 512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int tried;

static void open_path(const char *path) {
    char why[PATH_MAX + 256];
    if (!signupd_phone_library_check_elf(path, why, sizeof why)) {
        snprintf(failure, sizeof failure, "%s", why);
        return;
    }
    /* RTLD_LOCAL: its symbols (and libphonenumber's) stay out of everyone else's lookups. */
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(failure, sizeof failure, "cannot open %s: %s", path, dlerror());
        return;
    }
    /* The trial in a child said the same of this file; checked again here, where the answers
       count, and closed when they are wrong, so that nothing of it stays mapped. */
    if (!verify(handle, &functions, why, sizeof why)) {
        snprintf(failure, sizeof failure, "%s: %s", path, why);
        dlclose(handle);
        return;
    }
    opened = &functions;
}

const signupd_phone_functions *signupd_phone_library_open(const char *path, const char **why) {
    pthread_mutex_lock(&lock);
    if (!tried) {
        tried = 1;
        open_path(path);
    }
    pthread_mutex_unlock(&lock);
    if (opened == NULL && why != NULL) *why = failure;
    return opened;
}
