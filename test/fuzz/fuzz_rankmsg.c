/* fuzz_rankmsg.c - a message between ranks (rankmsg.h): decoding any
 * bytes is safe, reading its words too, and what decodes encodes back to
 * the same bytes. */
#include "fuzz.h"

#include "../../lib/base/alloc.h"
#include "../../lib/cluster/rankmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt__rank_msg m;
    int follows;
    if (rt__rank_decode((const char *)data, size, &m, &follows) < 0)
        return 0;
    /* The words' readers refuse what they cannot take, whatever came. */
    if (m.type == RT__RANK_TASK) {
        rt__rank_task_words w;
        (void)rt__rank_task_read(&m, &w);
    } else if (m.type == RT__RANK_ANSWER && !follows) {
        rt__answer a;
        rt__rank_answer_read(&m, &a);
        rt_free(a.result);
    } else if (m.type == RT__RANK_GPU) {
        rt__gpu_event e;
        int ours;
        rt__rank_gpu_read(&m, &e, &ours);
    } else if (m.type == RT__RANK_PULL || m.type == RT__RANK_OBJECT ||
               m.type == RT__RANK_FREE) {
        uint64_t object;
        unsigned run;
        int found;
        rt__rank_object_read(&m, &object, &run, &found);
    }
    if (follows)
        m.fd = 0; /* any descriptor: the bytes are not inline */
    size_t len = rt__rank_encoded_len(&m);
    if (len != size)
        __builtin_trap();
    char *again = rt__malloc(len);
    if (!again)
        return 0;
    rt__rank_encode_into(&m, again);
    if (memcmp(again, data, size) != 0)
        __builtin_trap();
    rt__free(again);
    return 0;
}
