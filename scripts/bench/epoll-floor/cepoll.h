// The epoll and socket calls epoll-floor makes (main.swift): Glibc's Swift module has no
// <sys/epoll.h>, and a packed epoll_event is simplest kept on this side.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

int ep_create(void);
/// Watches fd for input, or for room to write alone when `output`; `exclusive`: one waiter woken (the listener).
int ep_watch(int ep, int fd, int output, int exclusive, int add);
int ep_forget(int ep, int fd);
/// Waits for ready descriptors: their fds into `fds`, whether each can be written into `writable`.
int ep_wait(int ep, int *fds, int *writable, int max);
int unix_listen(const char *path);
int accept_nonblocking(int listener);
