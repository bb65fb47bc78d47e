#define _GNU_SOURCE
#include "cepoll.h"
#include <string.h>
#include <unistd.h>

int ep_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int ep_watch(int ep, int fd, int output, int exclusive, int add) {
    struct epoll_event e = {0};
    e.events = (output ? EPOLLOUT : EPOLLIN) | (exclusive ? EPOLLEXCLUSIVE : 0);
    e.data.fd = fd;
    return epoll_ctl(ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &e);
}

int ep_forget(int ep, int fd) { return epoll_ctl(ep, EPOLL_CTL_DEL, fd, 0); }

int ep_wait(int ep, int *fds, int *writable, int max) {
    struct epoll_event e[256];
    if (max > 256) max = 256;
    int n = epoll_wait(ep, e, max, -1);
    for (int i = 0; i < n; i++) {
        fds[i] = e[i].data.fd;
        writable[i] = (e[i].events & EPOLLOUT) != 0;
    }
    return n;
}

int unix_listen(const char *path) {
    unlink(path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4096) != 0) return -1;
    return s;
}

int accept_nonblocking(int listener) { return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC); }
