/* family.c - the accelerator families: their resources, variables and
 * request rules, after Ray's python/ray/_private/accelerators/. */
#include "family.h"

#include "resources.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const rt__family_info rt__families[RT__FAM_COUNT] = {
    [RT__FAM_NVIDIA] = {"NVIDIA GPU", "nvidia", "GPU", "CUDA_VISIBLE_DEVICES", 1},
    [RT__FAM_AMD] = {"AMD GPU", "amd", "GPU", "HIP_VISIBLE_DEVICES", 1},
    [RT__FAM_INTEL] = {"Intel GPU", "intel", "GPU", "ONEAPI_DEVICE_SELECTOR", 1},
    [RT__FAM_NEURON] = {"AWS Neuron", NULL, "neuron_cores", "NEURON_RT_VISIBLE_CORES", 0},
    [RT__FAM_TPU] = {"Google TPU", NULL, "TPU", "TPU_VISIBLE_CHIPS", 0},
    [RT__FAM_HPU] = {"Intel Gaudi", NULL, "HPU", "HABANA_VISIBLE_MODULES", 0},
    [RT__FAM_NPU] = {"Huawei Ascend", NULL, "NPU", "ASCEND_RT_VISIBLE_DEVICES", 1},
};

/* oneAPI selects devices by backend: Ray (and so rtask) names Level Zero's. */
#define ONEAPI_PREFIX "level_zero:"

/* Ray's TPU rule: a task gets whole chips, in the sizes a host's chips
 * split into; for one or two chips it also gets the bounds JAX needs to
 * see a slice of the host (github.com/google/jax/issues/14977). */
#define TPU_BOUNDS "TPU_CHIPS_PER_HOST_BOUNDS"
#define TPU_HOST_BOUNDS "TPU_HOST_BOUNDS"

rt__family rt__family_of_resource(const char *name)
{
    for (int f = RT__FAM_GPUS; f < RT__FAM_COUNT; f++)
        if (strcmp(name, rt__families[f].resource) == 0)
            return (rt__family)f;
    return RT__FAM_NONE;
}

int rt__family_check(rt__family f, double amount)
{
    const rt__family_info *fi = &rt__families[f];
    if (amount == 0 || (fi->fractions && amount < 1))
        return 0;
    if (amount != floor(amount))
        return rt__error(RT_EINVAL, "%s quantities must be whole numbers%s; %g is invalid",
                         fi->resource, fi->fractions ? " above 1" : "", amount);
    if (f == RT__FAM_TPU && amount != 1 && amount != 2 && amount != 4 && amount != 8)
        return rt__error(RT_EINVAL, "TPU quantities must be 1, 2, 4 or 8 chips; %g is "
                         "invalid", amount);
    return 0;
}

const char *rt__family_listed(rt__family f, const char *value)
{
    if (f != RT__FAM_INTEL || !*value)
        return value;
    return strncmp(value, ONEAPI_PREFIX, strlen(ONEAPI_PREFIX)) == 0
               ? value + strlen(ONEAPI_PREFIX) : NULL;
}

void rt__family_read_noset(rt__family_set *s)
{
    s->noset = 0;
    for (int f = 0; f < RT__FAM_COUNT; f++) {
        char name[64];
        snprintf(name, sizeof name, "RTASK_NOSET_%s", rt__families[f].variable);
        const char *v = getenv(name);
        if (v && *v && strcmp(v, "0") != 0)
            s->noset |= 1u << f;
    }
}

/* Appends "NAME=value\n" (or "NAME\n" when value is NULL). */
static size_t put(char *buf, size_t size, size_t len, const char *name,
                  const char *prefix, const char *value)
{
    if (len >= size)
        return size;
    int n = value ? snprintf(buf + len, size - len, "%s=%s%s\n", name, prefix, value)
                  : snprintf(buf + len, size - len, "%s\n", name);
    return n < 0 || (size_t)n >= size - len ? size : len + (size_t)n;
}

static size_t count_ids(const char *ids)
{
    size_t n = *ids != '\0';
    for (const char *p = ids; *p; p++)
        n += *p == ',';
    return n;
}

/* All of a host's chips: TPU_VISIBLE_CHIPS as the application had it,
 * so that the framework sees the host as it is, and no bounds. */
static size_t tpu_env(const rt__family_set *s, const char *ids, char *buf, size_t size,
                      size_t len)
{
    size_t n = count_ids(ids);
    const char *bounds = n == 1 ? "1,1,1" : n == 2 ? "1,2,1" : NULL;
    if (n == 0 || n != (size_t)s->accel_total)
        len = put(buf, size, len, rt__families[RT__FAM_TPU].variable, "", ids);
    len = put(buf, size, len, TPU_BOUNDS, "", bounds);
    return put(buf, size, len, TPU_HOST_BOUNDS, "", bounds ? "1,1,1" : NULL);
}

/* MPS holds a client to a share of each GPU's threads and memory.  The
 * devices are numbered as the task sees them (after CUDA_VISIBLE_DEVICES),
 * from 0; memory goes in whole MiB, rounded down. */
static size_t mps_env(const rt__held *h, char *buf, size_t size, size_t len)
{
    char percent[24], limits[4096] = "";
    snprintf(percent, sizeof percent, "%ld", (h->share * 100 + RT__UNIT - 1) / RT__UNIT);
    len = put(buf, size, len, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "", percent);
    size_t used = 0;
    int k = 0;
    for (const char *p = h->memory; *p && used < sizeof limits; k++) {
        char *end;
        unsigned long long bytes = strtoull(p, &end, 10);
        if (bytes >> 20)
            used += (size_t)snprintf(limits + used, sizeof limits - used, "%s%d=%lluMB",
                                     used ? "," : "", k, bytes >> 20);
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return used && used < sizeof limits
               ? put(buf, size, len, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "", limits)
               : len;
}

size_t rt__family_env(const rt__family_set *s, const rt__held *h, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!(s->noset >> s->gpu & 1)) {
        /* CUDA numbers devices in PCI bus order, as detection does. */
        if (s->gpu == RT__FAM_NVIDIA)
            len = put(buf, size, len, "CUDA_DEVICE_ORDER", "", "PCI_BUS_ID");
        len = put(buf, size, len, rt__families[s->gpu].variable,
                  s->gpu == RT__FAM_INTEL ? ONEAPI_PREFIX : "", h->gpus);
        if (s->gpu == RT__FAM_AMD && s->cuda_alias)
            len = put(buf, size, len, rt__families[RT__FAM_NVIDIA].variable, "", h->gpus);
    }
    if (s->mps && s->gpu == RT__FAM_NVIDIA && *h->gpus && h->share > 0)
        len = mps_env(h, buf, size, len);
    if (s->accel == RT__FAM_NONE || s->noset >> s->accel & 1)
        return len;
    if (s->accel == RT__FAM_TPU)
        return tpu_env(s, h->accel, buf, size, len);
    return put(buf, size, len, rt__families[s->accel].variable, "", h->accel);
}
