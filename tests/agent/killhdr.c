/*
 * tests/agent/killhdr.c — LD_PRELOAD library for durability_tests.sh header_kill:
 * when RP_KILLHDR_ARM is set, the first pwrite at offset 0 to a file whose name
 * ends in ".rpc.part" sends SIGKILL to the process before anything is written,
 * i.e. the instant between creating a chunk file and writing its header.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static void maybe_kill(int fd, off_t off)
{
    if (off != 0 || !getenv("RP_KILLHDR_ARM"))
        return;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(link, path, sizeof path - 1);
    if (l > 9) {
        path[l] = '\0';
        if (!strcmp(path + l - 9, ".rpc.part"))
            kill(getpid(), SIGKILL);
    }
}

/* The build uses _FILE_OFFSET_BITS=64, so the headers name this symbol pwrite64;
 * the plain pwrite symbol is defined under its own name below. Both are caught. */
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    maybe_kill(fd, off);
    return real(fd, buf, n, off);
}

ssize_t rp_killhdr_pwrite32(int fd, const void *buf, size_t n, off_t off) __asm__("pwrite");
ssize_t rp_killhdr_pwrite32(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    maybe_kill(fd, off);
    return real(fd, buf, n, off);
}
