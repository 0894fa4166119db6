/* testutil_tls: two self-signed certificate/key pairs (PEM) for the tests of
 * TLS listeners, each its own CA. Both name IP 127.0.0.1 and localhost; a
 * client that trusts pair a refuses a server presenting pair b. */
#ifndef HTTPSERVER_TESTUTIL_TLS_H
#define HTTPSERVER_TESTUTIL_TLS_H

extern const char testutil_tls_cert_a[]; /* certificate a (also its CA) */
extern const char testutil_tls_key_a[];  /* key of a */
extern const char testutil_tls_cert_b[]; /* certificate b (also its CA) */
extern const char testutil_tls_key_b[];  /* key of b */

#endif
