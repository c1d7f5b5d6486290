/* fuzz_callmsg.c - what a task's thread sends the application (its calls),
 * decoded as the proxy decodes it, and what the application replies,
 * decoded as the worker does: any bytes end in a call or a refusal. */
#include "fuzz.h"

#include "../../lib/node/callmsg.h"

static rt_arg args[RT_ARGS_MAX];

static void read_call(const rt__hdr *h, const char *payload, int *fds)
{
    for (uint32_t i = 0; i < h->nfds; i++)
        close(fds[i]);
    if (h->nfds)
        return; /* a memfd's bytes are mapped, then read as these are */
    rt__submission s;
    rt_opts opts;
    rt__callmsg_reply r;
    if (h->type == RT__CALL_SUBMIT &&
        rt__callmsg_read_submission(payload, (size_t)h->len, &s, &opts, args) == 0) {
        for (size_t i = 0; i < s.nargs; i++) /* every byte named is there */
            if (s.args[i].data && s.args[i].len)
                (void)((volatile const char *)s.args[i].data)[s.args[i].len - 1];
        if (s.opts && s.opts->name)
            (void)strlen(s.opts->name);
        if (s.opts && s.opts->label_selector)
            (void)strlen(s.opts->label_selector);
    }
    if (rt__callmsg_read_reply(h, payload, (size_t)h->len, -1, &r) == 0 && r.len)
        (void)((volatile const char *)r.data)[r.len - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_messages(data, size, read_call);
    return 0;
}
