/* fuzz_proto.c - what a worker sends, decoded as the runtime decodes it:
 * any bytes, with descriptors or not, end in messages or a refusal. */
#include "fuzz.h"

#include "../../lib/proto.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt__chan c;
    if (fuzz_channel(&c, data, size) < 0)
        return 0;
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    while (rt__chan_next(&c, &h, &payload, fds) > 0) {
        rt__result_msg r;
        if (rt__proto_read_result(&h, payload, fds, &r) == 0 && r.fd >= 0)
            close(r.fd);
    }
    rt__chan_close(&c);
    return 0;
}
