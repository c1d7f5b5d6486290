/* fuzz_relay.c - a worker's output, any bytes (name markers included),
 * relayed as lines with their prefixes. */
#include "fuzz.h"

#include "../../lib/node/output.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) { /* the relayed lines go nowhere */
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        quiet = 1;
    }
    int p[2];
    if (size > 60000 || pipe(p) < 0)
        return 0;
    if (write(p[1], data, size) != (ssize_t)size) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    close(p[1]);
    rt__relay r;
    rt__relay_init(&r, p[0], stdout);
    rt__relay_close(&r); /* reads it all, relays a last partial line */
    return 0;
}
