/* LD_PRELOAD shim counting heap allocations (malloc, calloc, realloc, posix_memalign,
 * aligned_alloc). SIGUSR2 prints the running total to stderr. Used by allocations.sh to
 * measure allocations per message on signupd's hot path. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
extern void *__libc_malloc(size_t); extern void *__libc_calloc(size_t,size_t); extern void *__libc_realloc(void*,size_t); extern void *__libc_memalign(size_t,size_t);
static atomic_ulong n;
void *malloc(size_t s){ atomic_fetch_add(&n,1); return __libc_malloc(s);}
void *calloc(size_t a,size_t b){atomic_fetch_add(&n,1); return __libc_calloc(a,b);}
void *realloc(void*p,size_t s){atomic_fetch_add(&n,1); return __libc_realloc(p,s);}
int posix_memalign(void **p, size_t a, size_t s){atomic_fetch_add(&n,1); *p=__libc_memalign(a,s); return *p?0:12;}
void *aligned_alloc(size_t a, size_t s){atomic_fetch_add(&n,1); return __libc_memalign(a,s);}
static void dump(int sig){ char buf[64]; int l=snprintf(buf,64,"mallocs=%lu\n",atomic_load(&n)); write(2,buf,l);}
__attribute__((constructor)) static void init(void){ signal(SIGUSR2, dump);}
