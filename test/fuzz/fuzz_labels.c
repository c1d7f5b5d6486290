/* fuzz_labels.c - a node's labels and a label selector, any bytes: the
 * input's first line is the labels, the rest the selector. */
#include "fuzz.h"

#include "../../lib/sched/labels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    char *selector = strchr(s, '\n');
    if (selector)
        *selector++ = '\0';
    char labels[RT__LABELS_LEN] = "rank=0";
    if (rt__labels_add(labels, s, "fuzz") == 0 && selector &&
        rt__selector_check(selector) == 0)
        (void)rt__selector_matches(selector, labels);
    free(s);
    return 0;
}
