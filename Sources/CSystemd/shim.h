#ifndef DRIVERD_CSYSTEMD_SHIM_H
#define DRIVERD_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <sys/uio.h>

// SD_LISTEN_FDS_START is a macro; Swift imports it only when it is a plain integer literal, so spell it out.
static inline int csystemd_listen_fds_start(void) { return SD_LISTEN_FDS_START; }

// sd_bus_call_method is variadic: logind's PowerOff takes one boolean (interactive: false, no polkit prompt).
static inline int csystemd_logind_power_off(sd_bus *bus, sd_bus_error *error) {
    return sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                              "PowerOff", error, NULL, "b", 0);
}

#endif
