/*
 * base/yaml.h - reading YAML scalars around two defects of libfyaml 0.7.12.
 *
 * libfyaml builds a scalar's text for fy_node_get_scalar(),
 * fy_node_get_scalar0() and fy_token_get_text() by measuring it first and
 * formatting it second. In a single-quoted scalar, two escaped quotes in a
 * row ('a''''b') come out of its formatter as three; the text then no longer
 * fits the measured buffer, the formatter gives up without releasing its
 * chunk array (a 4 KiB leak per scalar) and the cached text is cut short.
 * Every byte of YAML the controller reads is untrusted (policy manifests,
 * kubeconfigs from Secrets), so scalars are read here instead: single-quoted
 * ones are decoded from the input itself (quotes doubled, lines folded as
 * YAML 1.2 says), all others through libfyaml's token iterator, which always
 * releases what it allocates.
 */
#ifndef HCP_BASE_YAML_H
#define HCP_BASE_YAML_H

#include <stddef.h>

#include <libfyaml.h>

/*
 * The text of the scalar node n as a new NUL-terminated string (the caller
 * frees it) and its length in *lenp when lenp is not NULL (the text may
 * contain NUL bytes, written as "\0" escapes in double-quoted YAML); an
 * empty scalar (`key:`) reads as "". input and inputlen are the bytes the
 * document was parsed from (one string for the whole stream): libfyaml's
 * marks are offsets into them. Returns NULL when n is NULL or not a scalar,
 * or when allocation fails.
 */
char *hcp_yaml_scalar(struct fy_node *n, const char *input, size_t inputlen, size_t *lenp);

/*
 * Checks YAML input before it is given to libfyaml, which loops forever on
 * some malformed UTF-8 (in a directive, for example "%:\x91"): strict UTF-8
 * (no overlong forms, surrogates or code points past U+10FFFF) and no NUL
 * bytes. Returns the offset of the first bad byte, or len when all are good.
 */
size_t hcp_yaml_bad_utf8(const char *bytes, size_t len);

#endif
