#ifndef DRIVERD_CTIMEX_SHIM_H
#define DRIVERD_CTIMEX_SHIM_H

#include <sys/timex.h>
#include <errno.h>

// The kernel's clock discipline state, read only (modes 0 needs no privilege). Returns 1 when the kernel
// says the clock is synchronised (no STA_UNSYNC and adjtimex does not answer TIME_ERROR), 0 when not,
// -errno when the call failed (a seccomp filter, say).
static inline int ctimex_synchronized(long *maxerror_us) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (state < 0) return -errno;
    if (maxerror_us) *maxerror_us = tx.maxerror;
    return (state != TIME_ERROR && !(tx.status & STA_UNSYNC)) ? 1 : 0;
}

#endif
