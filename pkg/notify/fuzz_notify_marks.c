/* libFuzzer target: the notified annotation's text (notify_marks_parse()),
 * read back through its format (which must parse to the same marks). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "notify/due.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1), text[NOTIFY_MARKS_LEN * 4];
    notify_marks_t m, back;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    notify_marks_parse(s, &m);
    notify_marks_format(&m, text, sizeof(text));
    notify_marks_parse(text, &back);
    if (!notify_marks_cover(&m, &back) || !notify_marks_cover(&back, &m))
        abort();
    free(s);
    return 0;
}
