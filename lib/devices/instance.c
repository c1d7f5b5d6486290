/* instance.c - placing GPU and accelerator requests on instances. */
#include "instance.h"

#include <stdio.h>
#include <string.h>

void rt__instances_init(rt__instances *in, int count, const char (*ids)[RT__ID_LEN])
{
    memset(in, 0, sizeof *in);
    in->count = count;
    in->id = ids;
    memset(in->type, RT__ANY_TYPE, sizeof in->type);
    for (int i = 0; i < count; i++)
        in->free[i] = RT__UNIT;
}

const char *rt__instance_name(const rt__instances *in, int i, char buf[16])
{
    if (in->id)
        return in->id[i];
    snprintf(buf, 16, "%d", i);
    return buf;
}

int rt__pick_has(const rt__pick *pick, int i)
{
    return (int)(pick->mask[i / 64] >> (i % 64) & 1);
}

static void pick_add(rt__pick *pick, int i)
{
    pick->mask[i / 64] |= 1ULL << (i % 64);
}

int rt__instance_sick(const rt__instances *in, int i)
{
    return __atomic_load_n(&in->sick[i], __ATOMIC_RELAXED);
}

void rt__instance_sicken(rt__instances *in, int i)
{
    __atomic_store_n(&in->sick[i], 1, __ATOMIC_RELAXED);
}

/* Whether instance i may take a request of the type: it is of that type,
 * and healthy. */
static int of_type(const rt__instances *in, int i, int type)
{
    return !rt__instance_sick(in, i) && (type == RT__ANY_TYPE || in->type[i] == type);
}

/* The instance a fraction fits best: the smallest leftover wins. */
static int best_fit(const rt__instances *in, rt__amount amount, int type)
{
    int best = -1;
    for (int i = 0; i < in->count; i++)
        if (of_type(in, i, type) && in->free[i] >= amount &&
            (best < 0 || in->free[i] < in->free[best]))
            best = i;
    return best;
}

/* What bytes are of instance i, in units, rounded up; 0 when they do not
 * fit in it or its memory is unknown. */
static rt__amount share_of(const rt__instances *in, int i, uint64_t bytes)
{
    uint64_t mem = in->bytes[i];
    if (!mem || bytes > mem)
        return 0;
    return (rt__amount)(((unsigned __int128)bytes * RT__UNIT + mem - 1) / mem);
}

int rt__instances_pick_bytes(const rt__instances *in, uint64_t bytes, int type,
                             rt__pick *pick)
{
    int best = -1;
    rt__amount best_left = 0, best_share = 0;
    memset(pick, 0, sizeof *pick);
    for (int i = 0; i < in->count; i++) {
        rt__amount share = share_of(in, i, bytes);
        if (!of_type(in, i, type) || !share || share > in->free[i])
            continue;
        if (best < 0 || in->free[i] - share < best_left) {
            best = i;
            best_left = in->free[i] - share;
            best_share = share;
        }
    }
    if (best < 0)
        return 0;
    pick->each = best_share;
    pick_add(pick, best);
    return 1;
}

uint64_t rt__instances_largest(const rt__instances *in, int type)
{
    uint64_t most = 0;
    for (int i = 0; i < in->count; i++)
        if (of_type(in, i, type) && in->bytes[i] > most)
            most = in->bytes[i];
    return most;
}

int rt__instances_could(const rt__instances *in, rt__amount amount, int type)
{
    rt__amount have = 0;
    for (int i = 0; i < in->count; i++)
        have += of_type(in, i, type);
    return amount == 0 || (amount < RT__UNIT ? have > 0 : have >= amount / RT__UNIT);
}

int rt__instances_pick(const rt__instances *in, rt__amount amount, int type, rt__pick *pick)
{
    memset(pick, 0, sizeof *pick);
    if (amount == 0)
        return 1;
    if (amount < RT__UNIT) {
        int i = best_fit(in, amount, type);
        if (i < 0)
            return 0;
        pick->each = amount;
        pick_add(pick, i);
        return 1;
    }
    rt__amount wanted = amount / RT__UNIT;
    for (int i = 0; i < in->count && wanted > 0; i++)
        if (of_type(in, i, type) && in->free[i] == RT__UNIT) {
            pick_add(pick, i);
            wanted--;
        }
    if (wanted > 0) {
        memset(pick, 0, sizeof *pick);
        return 0;
    }
    pick->each = RT__UNIT;
    return 1;
}

void rt__instances_take(rt__instances *in, const rt__pick *pick)
{
    for (int i = 0; pick->each && i < in->count; i++)
        if (rt__pick_has(pick, i))
            in->free[i] -= pick->each;
}

void rt__instances_give(rt__instances *in, const rt__pick *pick)
{
    for (int i = 0; pick->each && i < in->count; i++)
        if (rt__pick_has(pick, i))
            in->free[i] += pick->each;
}

size_t rt__pick_format(const rt__pick *pick, const rt__instances *in, char *buf,
                       size_t size)
{
    size_t len = 0;
    char index[16];
    buf[0] = '\0';
    for (int i = 0; pick->each && i < in->count; i++)
        if (rt__pick_has(pick, i) && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    rt__instance_name(in, i, index));
    return len < size ? len : size - 1;
}
