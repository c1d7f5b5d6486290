/* fuzz_proto_worker.c - what a worker receives, decoded as it decodes
 * it: tasks and the DEVICES message. */
#include "fuzz.h"

#include "../../lib/base/alloc.h"
#include "../../lib/node/proto.h"

#include <unistd.h>

static void read_task_or_devices(const rt__hdr *h, const char *payload, int *fds)
{
    rt__task_msg m;
    rt__devices d;
    char *copy;
    if (rt__proto_read_task(h, payload, fds, &m) == 0 && m.arg_fd >= 0)
        close(m.arg_fd);
    else if (h->type == RT__MSG_DEVICES && rt__proto_read_devices(h, payload, &d, &copy) == 0)
        rt__free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_messages(data, size, read_task_or_devices);
    return 0;
}
