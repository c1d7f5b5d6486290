/* image.c - functions by object and offset, and the program's identity. */
#include "image.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What a walk over the loaded objects looks for, and finds. */
typedef struct search {
    uintptr_t addr;            /* place(): the function */
    const char *object;        /* find(): the object's name */
    uintptr_t base, size;      /* found: where its segments are */
    const char *name;
    int found;
} search;

/* The span of an object's loaded segments, from its base. */
static uintptr_t loaded_size(const struct dl_phdr_info *info)
{
    uintptr_t end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > end)
            end = ph->p_vaddr + ph->p_memsz;
    }
    return end;
}

static int by_address(struct dl_phdr_info *info, size_t size, void *arg)
{
    search *s = arg;
    (void)size;
    uintptr_t span = loaded_size(info);
    if (s->addr < info->dlpi_addr || s->addr >= info->dlpi_addr + span)
        return 0;
    s->base = info->dlpi_addr;
    s->name = info->dlpi_name;
    return s->found = 1;
}

static int by_name(struct dl_phdr_info *info, size_t size, void *arg)
{
    search *s = arg;
    (void)size;
    if (strcmp(info->dlpi_name, s->object) != 0)
        return 0;
    s->base = info->dlpi_addr;
    s->size = loaded_size(info);
    return s->found = 1;
}

static int image_place(const void *fn, rt__fn_place *out)
{
    search s = {.addr = (uintptr_t)fn};
    dl_iterate_phdr(by_address, &s);
    if (!s.found || strlen(s.name) >= sizeof out->object)
        return -1;
    snprintf(out->object, sizeof out->object, "%s", s.name);
    out->offset = s.addr - s.base;
    return 0;
}

static void *image_find(const rt__fn_place *p)
{
    search s = {.object = p->object};
    dl_iterate_phdr(by_name, &s);
    if (!s.found || p->offset >= s.size)
        return NULL;
    return (void *)(s.base + (uintptr_t)p->offset);
}

int rt__fn_cache_place(rt__fn_cache *c, const void *fn, rt__fn_place *out)
{
    size_t i = ((uintptr_t)fn >> 4) % RT__FN_CACHE;
    if (!fn)
        return -1; /* an empty slot's fn is NULL too */
    if (c->slot[i].fn != fn) {
        if (image_place(fn, &c->slot[i].place) < 0)
            return -1;
        c->slot[i].fn = fn;
    }
    *out = c->slot[i].place;
    return 0;
}

void *rt__fn_cache_find(rt__fn_cache *c, const rt__fn_place *p)
{
    size_t i = (p->offset >> 4) % RT__FN_CACHE;
    if (c->slot[i].fn && c->slot[i].place.offset == p->offset &&
        strcmp(c->slot[i].place.object, p->object) == 0)
        return (void *)c->slot[i].fn;
    void *fn = image_find(p);
    if (fn) {
        c->slot[i].fn = fn;
        c->slot[i].place = *p;
    }
    return fn;
}

static int add_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    rt__code_map *m = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum && m->n != SIZE_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (m->n == RT__CODE_RANGES) {
            m->n = SIZE_MAX;
            break;
        }
        m->range[m->n].lo = info->dlpi_addr + ph->p_vaddr;
        m->range[m->n].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        m->n++;
    }
    return 0;
}

void rt__code_map_take(rt__code_map *m)
{
    m->n = 0;
    dl_iterate_phdr(add_code, m);
}

int rt__code_map_has(const rt__code_map *m, const void *fn)
{
    uintptr_t a = (uintptr_t)fn;
    if (m->n == SIZE_MAX)
        return 1;
    for (size_t i = 0; i < m->n; i++)
        if (a >= m->range[i].lo && a < m->range[i].hi)
            return 1;
    return 0;
}

/* The GNU build id note of the program (the first object walked). */
static int build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    char *out = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const unsigned char *desc = (const unsigned char *)p + sizeof *n +
                                        ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + sizeof *n, "GNU", 4) == 0 && n->n_descsz <= 64) {
                int len = sprintf(out, "build-id ");
                for (unsigned j = 0; j < n->n_descsz; j++)
                    len += sprintf(out + len, "%02x", desc[j]);
                return 1;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 1; /* the program alone */
}

/* FNV-1a over the program's file, for a program built without an id. */
static void file_hash(char *out, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    char buf[65536];
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    ssize_t got;
    while (fd >= 0 && (got = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < got; i++)
            h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
    if (fd >= 0)
        close(fd);
    snprintf(out, size, "fnv %016llx", (unsigned long long)h);
}

void rt__image_identity(char *buf, size_t size)
{
    char id[9 + 2 * 64 + 1] = "";
    dl_iterate_phdr(build_id, id);
    if (id[0])
        snprintf(buf, size, "%s", id);
    else
        file_hash(buf, size);
}
