/* fuzz_proto_worker.c - what a worker receives, decoded as it decodes
 * it: tasks and the DEVICES message. */
#include "fuzz.h"

#include "../../lib/alloc.h"
#include "../../lib/proto.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt__chan c;
    rt__chan_init(&c, -1);
    c.in.data = malloc(size + 1);
    if (!c.in.data)
        return 0;
    memcpy(c.in.data, data, size);
    c.in.cap = size + 1;
    c.in.tail = size;
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    while (rt__chan_next(&c, &h, &payload, fds) > 0) {
        rt__task_msg m;
        rt__devices d;
        char *copy;
        if (rt__proto_read_task(&h, payload, fds, &m) == 0 && m.arg_fd >= 0)
            close(m.arg_fd);
        else if (h.type == RT__MSG_DEVICES &&
                 rt__proto_read_devices(&h, payload, &d, &copy) == 0)
            rt__free(copy);
    }
    rt__chan_close(&c);
    return 0;
}
