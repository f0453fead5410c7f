#ifndef DRIVERD_CSYSTEMD_SHIM_H
#define DRIVERD_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>

// SD_LISTEN_FDS_START is a macro; Swift imports it only when it is a plain integer literal, so spell it out.
static inline int csystemd_listen_fds_start(void) { return SD_LISTEN_FDS_START; }

#endif
