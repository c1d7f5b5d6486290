/* visible.c - parse CUDA_VISIBLE_DEVICES. */
#include "visible.h"

#include <ctype.h>
#include <string.h>

/* "12", "GPU-<uuid>" or "MIG-<...>", without surrounding blanks. */
static int valid_entry(const char *s, size_t len)
{
    if (len == 0 || len >= RT__ID_LEN)
        return 0;
    if ((len > 4 && strncmp(s, "GPU-", 4) == 0) ||
        (len > 4 && strncmp(s, "MIG-", 4) == 0)) {
        for (size_t i = 4; i < len; i++)
            if (!isalnum((unsigned char)s[i]) && !strchr("-/", s[i]))
                return 0;
        return 1;
    }
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int listed(char (*ids)[RT__ID_LEN], int n, const char *s, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(ids[i]) == len && memcmp(ids[i], s, len) == 0)
            return 1;
    return 0;
}

int rt__visible_parse(const char *value, char (*ids)[RT__ID_LEN], int max,
                      const char **bad, const char **why)
{
    int n = 0;
    *bad = NULL;
    *why = NULL;
    const char *p = value;
    while (*p && n < max) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, ",");
        size_t trimmed = len;
        while (trimmed && p[trimmed - 1] == ' ')
            trimmed--;
        /* A repeated device is invalid too: CUDA stops there. */
        if (!valid_entry(p, trimmed) || listed(ids, n, p, trimmed)) {
            *bad = p;
            *why = valid_entry(p, trimmed) ? "is repeated" : "is not a GPU id";
            break;
        }
        memcpy(ids[n], p, trimmed);
        ids[n][trimmed] = '\0';
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    return n;
}
