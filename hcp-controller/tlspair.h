/* tlspair: a certificate pair served from files, read at start and renewed
 * while the server runs (a rotated Secret), for the webhooks' and the
 * metrics' TLS listeners alike. */
#ifndef HCP_TLSPAIR_H
#define HCP_TLSPAIR_H

#include <stddef.h>

#include "httpserver/httpserver.h"

#define TLS_PAIR_MAX (1024 * 1024) /* bytes of one PEM file, at most */

/* Where a pair comes from: the flags that named the files (for errors) and
 * what it serves (for the log: "webhook", "metrics"). Strings borrowed. */
typedef struct {
    const char *what;
    const char *cert_flag, *cert_file;
    const char *key_flag, *key_file;
} tls_files_t;

/* Reads a whole file of at most TLS_PAIR_MAX bytes into a new string *out
 * (NUL-terminated). Returns 0, or HCP_EIO (missing, unreadable, empty, too
 * large: the message names flag and path) or HCP_ENOMEM; *out is NULL then. */
int tls_read_file(const char *flag, const char *path, char **out, char *err, size_t errlen);

/* Reads both files of f into new strings *cert and *key. Returns 0, or the
 * first error of tls_read_file() (nothing is returned then). */
int tls_pair_read(const tls_files_t *f, char **cert, char **key, char *err, size_t errlen);

/* One of f's files changed: when the pair on disk differs from the one
 * served (*cert, *key, owned) and loads, srv serves it from the next
 * handshake on and it replaces *cert and *key; otherwise the old pair stays
 * served and the reason is logged. Never fails the listener. */
void tls_pair_renew(const tls_files_t *f, http_server *srv, char **cert, char **key);

#endif
