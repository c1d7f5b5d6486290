/* fuzz_journal.c - a journal as a task may leave it (the worker's memory
 * is the task's to scribble on), replayed as the runtime replays a dead
 * worker's: any counts and bytes end in results or a stop, never a read
 * outside the journal. */
#include "fuzz.h"

#include "../../lib/node/journal.h"

static int take(void *ctx, const rt__result_msg *r)
{
    size_t *sum = ctx;
    for (size_t i = 0; i < r->len; i++) /* every byte handed over is readable */
        *sum += ((const unsigned char *)r->data)[i];
    return r->status == 1 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rt__journal j;
    uint64_t words[3] = {0, 0, 0};
    size_t head = size < sizeof words ? size : sizeof words;
    memcpy(words, data, head);
    size_t body = size - head < sizeof j.data ? size - head : sizeof j.data;
    memcpy(j.data, data + head, body);
    j.used = words[0] % 2 ? words[0] : body; /* sometimes a count beyond it */
    j.base = words[1];
    size_t sum = 0;
    rt__journal_replay(&j, words[2], take, &sum);
    return sum == 1; /* keep the sum */
}
