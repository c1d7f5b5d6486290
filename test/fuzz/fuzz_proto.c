/* fuzz_proto.c - what a worker sends, decoded as the runtime decodes it:
 * any bytes, with descriptors or not, end in messages or a refusal. */
#include "fuzz.h"

#include "../../lib/node/proto.h"

#include <unistd.h>

/* A RESULTS's bytes are split as the runtime splits them. */
static void read_result(const rt__hdr *h, const char *payload, int *fds)
{
    rt__result_msg r;
    rt_value parts[RT_RETURNS_MAX];
    size_t n;
    if (rt__proto_read_result(h, payload, fds, &r) < 0)
        return;
    if (r.packed && r.data)
        (void)rt__parts_read(r.data, r.len, parts, &n);
    if (r.fd >= 0)
        close(r.fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_messages(data, size, read_result);
    return 0;
}
