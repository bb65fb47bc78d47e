#ifndef SIGNUPD_PHONE_LIBRARY_H
#define SIGNUPD_PHONE_LIBRARY_H
/* libphonenumber, with protobuf and abseil a dozen shared libraries and their C++ static
   initialisers, cost every start of signupd 2.5 ms before main() when the daemon was linked
   with it (issue 29, the cold start). The shim that calls it (CPhoneNumber, signupd_phone.h)
   is now its own shared object, libsignupd-phone.so, opened here when a phone number is
   first checked or warmed up after start. */
#include "signupd_phone.h"

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    signupd_phone_status (*parse)(const char *text, const char *region, char *e164, size_t e164_size, int *national_digits, int *in_region);
    int (*region_is_known)(const char *region);
} signupd_phone_functions;

/* Where libsignupd-phone.so is: in ../lib/signupd beside the executable, else beside it (a
   build directory) (/usr/sbin -> /usr/lib/signupd, /usr/local/sbin ->
   /usr/local/lib/signupd): the first place where anything has that name, readable or not.
   Writes its path into `path` and returns 1, or writes why not into `path` and returns 0.
   Opens nothing: cheap enough for every start. */
int signupd_phone_library_locate(char *path, size_t path_size);

/* Whether `path` is a whole 64-bit ELF object: every segment the loader maps lies within the
   file. dlopen maps a truncated library and the process dies of SIGBUS when it touches the
   missing pages; this reads the headers only. Returns 1, or 0 with why in `why`. */
int signupd_phone_library_check_elf(const char *path, char *why, size_t why_size);

/* Whether loading `path` and checking one number works in a child process: dlopen runs the
   library's code (its initialisers, then ours), and a library damaged anywhere but its length
   (helper-29: a dynamic section overwritten, code replaced) killed signupd with SIGSEGV or
   SIGILL at every start. The child is `program` (signupd itself: /proc/self/exe) run as
   `signupd --phone-library-trial`, which calls signupd_phone_library_trial; it has standard
   output and error, the pipe it answers on, and none of signupd's other descriptors, and it
   dies with the process that started it. With `as_uid` other than (uid_t)-1, the child first
   becomes that user and group (`signupd --check-config` run by root: root reads what
   signupd's user may not). Returns 1 when the child loaded it and checked a number; 0 with
   why in `why` when the library is at fault: the child could not load it (dlopen's reason),
   got wrong answers, died of a fault signal (SIGSEGV, SIGBUS, SIGILL, ...) or did not finish
   in 10 s; -1 with why when the trial itself did not happen, which may pass: the child
   could not be started (EAGAIN: the service's TasksMax reached), was ended from outside by
   another signal (SIGKILL), or was stopped (SIGSTOP) when its 10 s ran out. The child
   ignores what a service manager sends (SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2). */
int signupd_phone_library_probe(const char *path, const char *program, uid_t as_uid, gid_t as_gid, char *why, size_t why_size);

/* The child's side of signupd_phone_library_probe, for `signupd --phone-library-trial
   LIBRARY UID|- GID|- PARENT-PID` (its argc and argv whole): becomes the user, loads the
   library, checks known answers, and exits (0 when usable), its reason written to descriptor
   3. Never returns. */
int signupd_phone_library_trial(int argc, char *const argv[]);

/* Opens the library at `path` once, whichever thread asks first (later calls return the
   first call's answer, whatever their path): checks it with signupd_phone_library_check_elf,
   then dlopen. NULL when it cannot be opened, with why in `*why` (static text, valid for
   the process). */
const signupd_phone_functions *signupd_phone_library_open(const char *path, const char **why);

#ifdef __cplusplus
}
#endif
#endif
