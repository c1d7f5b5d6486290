/* models.c - device names and accelerator types: the PCI id database,
 * and Ray's rules for each vendor. */
#include "models.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int has_digit(const char *s, size_t n)
{
    while (n--)
        if (isdigit((unsigned char)*s++))
            return 1;
    return 0;
}

/* Ray's rule (its nvidia_gpu.py and the tests beside it): after the
 * first word, a model of capitals and digits that ends its word or a
 * dash ("NVIDIA H100 80GB HBM3" -> "H100", "Tesla V100-SXM2-16GB" ->
 * "V100"); where there is none, as in "NVIDIA GeForce RTX 4090" or
 * "NVIDIA RTX PRO 6000 Blackwell", the words up to the first that has a
 * digit, joined by dashes ("GeForce-RTX-4090", "RTX-PRO-6000"). */
static void ray_rule(const char *name, char *type, size_t size)
{
    const char *p = name + strcspn(name, " \t");
    p += strspn(p, " \t");
    size_t n = 0, digits = 0;
    while (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]))
        digits += isdigit((unsigned char)p[n++]) != 0;
    type[0] = '\0';
    if (n && digits && (!p[n] || strchr("- \t", p[n]))) {
        snprintf(type, size, "%.*s", (int)n, p);
        return;
    }
    for (size_t len = 0; *p && len + 1 < size; p += strspn(p, " \t")) {
        size_t w = strcspn(p, " \t");
        len += (size_t)snprintf(type + len, size - len, "%s%.*s", len ? "-" : "", (int)w, p);
        if (has_digit(p, w))
            return;
        p += w;
    }
    type[0] = '\0'; /* no word with a digit: no model */
}

/* The product of a pci.ids name, "GH100 [H100 SXM5 80GB]": the part in
 * brackets, else the name itself. */
static void product(const char *name, char *out, size_t size)
{
    const char *open = strchr(name, '[');
    snprintf(out, size, "%s", open ? open + 1 : name);
    out[strcspn(out, "]")] = '\0';
}

void rt__accelerator_type(const char *model, char *type, size_t size)
{
    type[0] = '\0';
    if (!strchr(model, '[')) {
        ray_rule(model, type, size);
        return;
    }
    /* A product name may start with its model ("H100 SXM5 80GB") or, as
     * the driver's names do, with a brand that the rule skips. */
    char name[128];
    product(model, name + 2, sizeof name - 2);
    int branded = strncmp(name + 2, "Tesla ", 6) == 0 || strncmp(name + 2, "NVIDIA ", 7) == 0;
    memcpy(name, "- ", 2);
    ray_rule(branded ? name + 2 : name, type, size);
}

/* Types that Debian's pci.ids (2023) does not name, or that Ray names by
 * device id: Ray's table of AMD products (amd_gpu.py), Google's TPU
 * generations, Gaudi's, and NVIDIA data-centre GPUs newer than pci.ids. */
static const struct {
    unsigned vendor, device;
    const char *type;
} type_table[] = {
    {RT__VENDOR_NVIDIA, 0x2321, "H100"}, {RT__VENDOR_NVIDIA, 0x2335, "H200"},
    {RT__VENDOR_NVIDIA, 0x26b9, "L40S"}, {RT__VENDOR_NVIDIA, 0x2342, "GH200"},
    {RT__VENDOR_AMD, 0x738c, "AMD-Instinct-MI100"}, {RT__VENDOR_AMD, 0x7408, "AMD-Instinct-MI250X"},
    {RT__VENDOR_AMD, 0x740c, "AMD-Instinct-MI250X-MI250"},
    {RT__VENDOR_AMD, 0x740f, "AMD-Instinct-MI210"},
    {RT__VENDOR_AMD, 0x74a1, "AMD-Instinct-MI300X-OAM"},
    {RT__VENDOR_AMD, 0x6798, "AMD-Radeon-R9-200-HD-7900"},
    {RT__VENDOR_AMD, 0x6799, "AMD-Radeon-HD-7900"}, {RT__VENDOR_AMD, 0x679a, "AMD-Radeon-HD-7900"},
    {RT__VENDOR_AMD, 0x679b, "AMD-Radeon-HD-7900"},
    {RT__VENDOR_GOOGLE, 0x005e, "TPU-V4"}, {RT__VENDOR_GOOGLE, 0x0062, "TPU-V5P"},
    {RT__VENDOR_GOOGLE, 0x0063, "TPU-V5LITEPOD"}, {RT__VENDOR_GOOGLE, 0x006f, "TPU-V6E"},
    {RT__VENDOR_GOOGLE, 0x0076, "TPU-V7X"},
    {RT__VENDOR_HABANA, 0x1000, "Intel-GAUDI"}, {RT__VENDOR_HABANA, 0x1010, "Intel-GAUDI"},
    {RT__VENDOR_HABANA, 0x1020, "Intel-GAUDI2"},
};

const char *rt__type_by_id(unsigned vendor, unsigned device)
{
    for (size_t i = 0; i < sizeof type_table / sizeof *type_table; i++)
        if (type_table[i].vendor == vendor && type_table[i].device == device)
            return type_table[i].type;
    return "";
}

/* "dddd  name": exactly four hex digits, blanks, then a name.  A line of
 * another shape is not an entry (its name is never read from beyond its
 * end).  Returns the name, or NULL. */
static const char *id_and_name(const char *s, unsigned *id)
{
    for (int i = 0; i < 4; i++)
        if (!isxdigit((unsigned char)s[i]))
            return NULL;
    if (s[4] != ' ' && s[4] != '\t')
        return NULL;
    const char *name = s + 4 + strspn(s + 4, " \t");
    if (!*name || sscanf(s, "%4x", id) != 1)
        return NULL;
    return name;
}

/* The device's name in pci.ids: the "\tdddd  name" line under the vendor. */
void rt__pci_ids_name(const char *db, unsigned vendor, unsigned device, char *out,
                      size_t size)
{
    FILE *f = fopen(db, "r");
    if (!f)
        return;
    char line[512];
    int in_vendor = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        unsigned id;
        const char *name;
        if (line[0] != '\t' && line[0] != '#') {
            in_vendor = id_and_name(line, &id) && id == vendor;
        } else if (in_vendor && line[0] == '\t' && (name = id_and_name(line + 1, &id)) &&
                   id == device) {
            snprintf(out, size, "%s", name);
            break;
        }
    }
    fclose(f);
}

/* Ray names Intel GPUs "Intel-GPU-" and the product's last two words:
 * "Data Center GPU Max 1550" -> "Intel-GPU-Max-1550". */
void rt__intel_type(const char *model, char *type, size_t size)
{
    char name[128];
    product(model, name, sizeof name);
    size_t len = strlen(name);
    while (len && name[len - 1] == ' ')
        name[--len] = '\0';
    char *last = strrchr(name, ' '), *cut = last;
    while (cut && cut > name && cut[-1] != ' ')
        cut--;
    if (!last || cut == name)
        return;
    *last = '-';
    snprintf(type, size, "Intel-GPU-%s", cut);
}
