/* log: structured log lines on stderr, as text or JSON.
 *
 * Every line is a message plus key/value pairs, so operators can grep the
 * text form and ship the JSON form (--log-format json) to a log store.
 * Verbosity follows the convention of other controllers: -v N enables
 * debug lines of level <= N; errors and info lines are always written.
 */
#ifndef HCP_LOG_H
#define HCP_LOG_H

#include <stdbool.h>

typedef enum log_level { LOG_ERROR = -2, LOG_WARN = -1, LOG_INFO = 0 } log_level_t;

/* Chooses the format and verbosity; before any call the format is text at
 * verbosity 0. */
void log_setup(bool json, int verbosity);

/* True when lines of `level` are written (debug levels are 1, 2, ...). */
bool log_enabled(int level);

/* Writes one line: msg, then key/value string pairs terminated by NULL.
 * A NULL value is written as an empty string. */
void log_kv(int level, const char *msg, ...) __attribute__((sentinel));

#define LOG_ONCE_SLOTS 256

/* The keys a caller has logged already, for messages worth saying once (an
 * API server's warning repeats on every request that triggers it). Zero it
 * to start; it owns no memory. */
typedef struct log_once {
    unsigned long long seen[LOG_ONCE_SLOTS]; /* 64-bit hashes of keys, 0 = free */
    unsigned n;                              /* slots in use */
} log_once_t;

/* True the first time key is passed for this set, false afterwards, and
 * false for every key once the set is full (LOG_ONCE_SLOTS distinct keys):
 * a flood of distinct keys is not logged at full level forever. */
bool log_once_first(log_once_t *set, const char *key);

#endif
