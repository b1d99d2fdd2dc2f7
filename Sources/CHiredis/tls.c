// TLS for Redis connections on top of hiredis's ssl.c: a context that always verifies the peer, and a start that
// checks the certificate names the host connected to (hiredis itself only sets SNI).
#include "include/CHiredis.h"
#include "hiredis/hiredis_ssl.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>

static void lc_openssl_error(char *error, size_t size, const char *what, const char *file) {
    unsigned long e = ERR_get_error();
    char reason[256] = "unknown error";
    if (e != 0) ERR_error_string_n(e, reason, sizeof(reason));
    if (file)
        snprintf(error, size, "%s %s: %s", what, file, reason);
    else
        snprintf(error, size, "%s: %s", what, reason);
    ERR_clear_error();
}

struct ssl_ctx_st *lc_redis_tls_context_create(const char *ca_file, const char *cert_file, const char *key_file,
                                               char *error, size_t error_size) {
    ERR_clear_error();
    if ((cert_file == NULL) != (key_file == NULL)) {
        snprintf(error, error_size, "a client certificate needs its key, and a key its certificate");
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        lc_openssl_error(error, error_size, "cannot make a TLS context", NULL);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (ca_file) {
        if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
            lc_openssl_error(error, error_size, "cannot read the CA certificates in", ca_file);
            goto fail;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        lc_openssl_error(error, error_size, "cannot load the system's trusted certificates", NULL);
        goto fail;
    }
    if (cert_file) {
        if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
            lc_openssl_error(error, error_size, "cannot read the client certificate in", cert_file);
            goto fail;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
            if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH)
                lc_openssl_error(error, error_size, "the client certificate does not match the key in", key_file);
            else
                lc_openssl_error(error, error_size, "cannot read the client key in", key_file);
            goto fail;
        }
        if (SSL_CTX_check_private_key(ctx) != 1) {
            lc_openssl_error(error, error_size, "the client certificate does not match the key in", key_file);
            goto fail;
        }
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

void lc_redis_tls_context_free(struct ssl_ctx_st *context) { SSL_CTX_free(context); }

int lc_redis_tls_start(redisContext *c, struct ssl_ctx_st *context, const char *verify_name,
                       char *error, size_t error_size) {
    ERR_clear_error();
    SSL *ssl = SSL_new(context);
    if (!ssl) {
        lc_openssl_error(error, error_size, "cannot start TLS", NULL);
        return -1;
    }
    unsigned char address[16];
    int ok;
    if (inet_pton(AF_INET, verify_name, address) == 1 || inet_pton(AF_INET6, verify_name, address) == 1) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), verify_name);
    } else {
        X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = SSL_set1_host(ssl, verify_name) && SSL_set_tlsext_host_name(ssl, verify_name);
    }
    if (!ok) {
        lc_openssl_error(error, error_size, "cannot check the certificate against", verify_name);
        SSL_free(ssl);
        return -1;
    }
    if (redisInitiateSSL(c, ssl) == REDIS_OK) return 0;  // hiredis owns ssl now
    long verified = SSL_get_verify_result(ssl);
    if (verified != X509_V_OK)
        snprintf(error, error_size, "TLS: the server's certificate was refused: %s (checked for %s)",
                 X509_verify_cert_error_string(verified), verify_name);
    else
        snprintf(error, error_size, "TLS: %s", c->errstr[0] ? c->errstr : "the handshake failed");
    SSL_free(ssl);
    return -1;
}

int lc_redis_make_nonblocking(redisContext *c) {
    int flags = fcntl(c->fd, F_GETFL);
    if (flags == -1 || fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) == -1) return -1;
    c->flags &= ~REDIS_BLOCK;
    return 0;
}
