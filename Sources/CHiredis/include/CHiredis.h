// hiredis 1.x (vendored in ../hiredis, built by SwiftPM with TLS) and LiveControls' TLS helpers over it.
#ifndef LIVECONTROLS_CHIREDIS_H
#define LIVECONTROLS_CHIREDIS_H

#include "../hiredis/hiredis.h"
#include <stddef.h>

struct ssl_ctx_st;

/// A TLS client context for Redis connections: the peer's certificate is always verified, against `ca_file` (PEM)
/// or, when it is NULL, the system's trust store; TLS 1.2 or newer. `cert_file` and `key_file` (PEM, both or
/// neither) are the client's own certificate for servers that ask for one (`tls-auth-clients yes`). NULL on
/// failure, with the reason in `error`. Thread-safe to share once made; freed with lc_redis_tls_context_free.
struct ssl_ctx_st *lc_redis_tls_context_create(const char *ca_file, const char *cert_file, const char *key_file,
                                               char *error, size_t error_size);
void lc_redis_tls_context_free(struct ssl_ctx_st *context);

/// Starts TLS on a connected context (blocking: the handshake, bounded by the socket's timeouts; non-blocking: it
/// goes on in later reads and writes). The certificate must name `verify_name`: a DNS name (also sent as SNI) or
/// an IP address. 0 on success; -1 with the reason in `error` (the certificate check's own words when that failed).
int lc_redis_tls_start(redisContext *c, struct ssl_ctx_st *context, const char *verify_name,
                       char *error, size_t error_size);

/// Switches a connected blocking context to non-blocking (for a poll loop), keeping its TLS session. 0 on success.
int lc_redis_make_nonblocking(redisContext *c);

#endif
