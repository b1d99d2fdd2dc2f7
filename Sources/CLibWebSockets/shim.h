// Header-only shim over libwebsockets: a system library target cannot compile C,
// so the macros Swift cannot import are re-exported as enums and static inline functions.
#ifndef LIVECONTROLS_LWS_SHIM_H
#define LIVECONTROLS_LWS_SHIM_H

#include <libwebsockets.h>

enum {
    SHIM_LWS_PRE = LWS_PRE,
};

static inline void shim_lws_log(int level, const char *message) {
    _lws_log(level, "%s\n", message);
}

/// Sets the mount's origin protocol (a bitfield neighbour makes this awkward from Swift).
static inline void shim_mount_set_protocol(struct lws_http_mount *m, unsigned char proto) {
    m->origin_protocol = proto;
}

#endif
