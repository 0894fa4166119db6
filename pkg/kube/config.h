/*
 * kube/config.h - where the API server is and how to authenticate to it.
 *
 * A kube_config is filled from a kubeconfig file (the YAML written by
 * kubectl) or from the in-cluster service account. Every certificate and key
 * is held in memory as PEM bytes so libcurl receives them as blobs; nothing
 * is written to disk. The caller allocates the struct; kube_config_free()
 * releases what the loaders allocated inside it.
 */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kube/error.h"

#define KUBE_INCLUSTER_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct kube_config {
    char *server;         /* "https://host:port", no trailing slash (owned) */
    char *ca;             /* PEM CA bundle, NULL = system trust store (owned) */
    size_t ca_len;
    char *cert;           /* PEM client certificate or NULL (owned) */
    size_t cert_len;
    char *key;            /* PEM client key or NULL (owned) */
    size_t key_len;
    char *token;          /* bearer token or NULL (owned) */
    char *token_file;     /* re-read when it changes (in-cluster), or NULL */
    bool insecure;        /* insecure-skip-tls-verify: only when asked for */
    char context[128];    /* the context that was used, for messages */
} kube_config;

/*
 * Loads `path` (a kubeconfig) using `context`, or the file's current-context
 * when context is NULL. Relative file references (certificate-authority,
 * client-certificate, client-key, tokenFile) are resolved against the
 * kubeconfig's directory, as kubectl does. cfg is zeroed first; on failure it
 * holds nothing and err says which field was wrong.
 */
int kube_config_load_file(kube_config *cfg, const char *path, const char *context,
                          kube_error *err);

/*
 * Same as kube_config_load_file() for a kubeconfig held in memory (len
 * bytes). basedir resolves relative paths; NULL means the current directory.
 */
int kube_config_load_yaml(kube_config *cfg, const char *yaml, size_t len,
                          const char *basedir, const char *context, kube_error *err);

/*
 * Loads the in-cluster service account: KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT from the environment, `dir`/token (kept as
 * token_file so rotation is noticed) and `dir`/ca.crt. dir NULL means
 * KUBE_INCLUSTER_DIR. Fails with HCP_ECONFIG when not running in a pod.
 */
int kube_config_load_incluster(kube_config *cfg, const char *dir, kube_error *err);

/*
 * The usual resolution order: `path` when given, else $KUBECONFIG (first
 * entry), else in-cluster when KUBERNETES_SERVICE_HOST is set, else
 * ~/.kube/config.
 */
int kube_config_load_default(kube_config *cfg, const char *path, const char *context,
                             kube_error *err);

/* Releases everything the loaders allocated and zeroes cfg. */
void kube_config_free(kube_config *cfg);

/* Frees a NUL-terminated secret (a bearer token) after zeroing its bytes,
 * so that it is not left in freed memory. NULL is ignored. */
void kube_secret_free(char *secret);

/*
 * Reads a bearer token file into a new NUL-terminated string (caller frees)
 * with surrounding whitespace removed. Used at load time and again when the
 * client notices the file changed.
 */
int kube_config_read_token(const char *path, char **token, kube_error *err);

/*
 * Decodes standard base64 (whitespace ignored, padding optional) into a new
 * buffer (caller frees) with a trailing NUL not counted in *outlen.
 */
int kube_base64_decode(const char *in, size_t inlen, char **out, size_t *outlen);

#endif
