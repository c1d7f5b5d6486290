/* fuzz_proto_worker.c - what a worker receives, decoded as it decodes
 * it: tasks (and the argument table of a task of several), ARG and
 * SPARE, and the DEVICES message. */
#include "fuzz.h"

#include "../../lib/base/alloc.h"
#include "../../lib/node/proto.h"

#include <unistd.h>

/* A table read with two arguments that came by ARG, as a worker would
 * have mapped them. */
static void read_table(const rt__task_msg *m)
{
    static const char mapped_bytes[16];
    static rt_value out[RT_ARGS_MAX];
    static unsigned char board[RT_ARGS_MAX];
    const rt_value mapped[2] = {{mapped_bytes, 8}, {mapped_bytes, 16}};
    size_t n;
    if (m->arg && rt__args_read(m->arg, m->len, mapped, 2, out, board, &n) == 0)
        for (size_t i = 0; i < n; i++)
            if (out[i].len) /* every byte it points to must be readable */
                (void)*(volatile const char *)((const char *)out[i].data + out[i].len - 1);
}

static void read_task_or_devices(const rt__hdr *h, const char *payload, int *fds)
{
    rt__task_msg m;
    rt__devices d;
    char *copy;
    int fd;
    size_t len;
    if (rt__proto_read_task(h, payload, fds, &m) == 0) {
        if (m.type == RT__MSG_TASK_ARGS || m.type == RT__MSG_CALL_ARGS)
            read_table(&m);
        if (m.arg_fd >= 0)
            close(m.arg_fd);
    } else if ((h->type == RT__MSG_ARG || h->type == RT__MSG_SPARE) &&
               rt__proto_read_arg(h, fds, &fd, &len) == 0) {
        close(fd);
    } else if (h->type == RT__MSG_DEVICES && rt__proto_read_devices(h, payload, &d, &copy) == 0) {
        rt__free(copy);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_messages(data, size, read_task_or_devices);
    return 0;
}
