#ifndef DRIVERD_CGPS_SHIM_H
#define DRIVERD_CGPS_SHIM_H

#include <gps.h>

// gps_send is variadic (printf-like) and does not import; send a finished command instead.
static inline int cgps_send(struct gps_data_t *data, const char *command) {
    return gps_send(data, "%s", command);
}

// The socket libgps reads from, so a caller can poll it together with its own descriptors.
static inline int cgps_fd(const struct gps_data_t *data) {
    return (int)data->gps_fd;
}

#endif
