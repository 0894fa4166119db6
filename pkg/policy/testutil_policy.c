#include "policy/testutil_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *tu_json(const char *single_quoted)
{
    char *s = strdup(single_quoted);
    json_error_t je;
    json_t *doc;
    size_t i;

    if (s == NULL)
        abort();
    for (i = 0; s[i]; i++)
        if (s[i] == '\'')
            s[i] = '"';
    if ((doc = json_loads(s, 0, &je)) == NULL) {
        fprintf(stderr, "bad test JSON (%s): %s\n", je.text, s);
        abort();
    }
    free(s);
    return doc;
}
