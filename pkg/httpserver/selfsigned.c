/*
 * httpserver/selfsigned.c - a throw-away self-signed certificate (GnuTLS),
 * for a TLS listener started without a certificate of its own.
 */
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "httpserver/httpserver.h"

/* Copies a GnuTLS datum into a NUL-terminated malloc'd string. */
static char *take(gnutls_datum_t *d)
{
    char *s = malloc(d->size + 1);

    if (s) {
        memcpy(s, d->data, d->size);
        s[d->size] = '\0';
    }
    gnutls_free(d->data);
    d->data = NULL;
    return s;
}

int http_self_signed(const char *cn, char **cert_pem, char **key_pem, char *err, size_t errlen)
{
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    gnutls_datum_t c = {NULL, 0}, k = {NULL, 0};
    unsigned char serial[16];
    time_t now = time(NULL);
    int rc;

    *cert_pem = *key_pem = NULL;
    if ((rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial))) < 0)
        goto fail;
    serial[0] &= 0x7f; /* a positive serial number */
    if ((rc = gnutls_x509_privkey_init(&key)) < 0 ||
        (rc = gnutls_x509_privkey_generate(
             key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0 ||
        (rc = gnutls_x509_crt_init(&crt)) < 0 || (rc = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
        (rc = gnutls_x509_crt_set_serial(crt, serial, sizeof(serial))) < 0 ||
        (rc = gnutls_x509_crt_set_activation_time(crt, now - 60)) < 0 ||
        (rc = gnutls_x509_crt_set_expiration_time(crt, now + 365L * 24 * 3600)) < 0 ||
        (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                            (unsigned)strlen(cn))) < 0 ||
        (rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, cn,
                                                   (unsigned)strlen(cn), GNUTLS_FSAN_SET)) < 0 ||
        (rc = gnutls_x509_crt_set_key(crt, key)) < 0 ||
        (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
        (rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0)) < 0 ||
        (rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c)) < 0 ||
        (rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &k)) < 0)
        goto fail;
    *cert_pem = take(&c);
    *key_pem = take(&k);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
    if (!*cert_pem || !*key_pem) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    }
    return 0;
fail:
    gnutls_free(c.data);
    gnutls_free(k.data);
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (key)
        gnutls_x509_privkey_deinit(key);
    return hcp_errf(err, errlen, HCP_ETLS, "a self-signed certificate: %s", gnutls_strerror(rc));
}
