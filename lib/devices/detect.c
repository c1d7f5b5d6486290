/* detect.c - find accelerators through hwloc or PCI sysfs. */
#include "detect.h"

#include "models.h"
#include "nvml.h"
#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef RT_HAVE_HWLOC
#include <hwloc.h>
#include <signal.h>
#include <sys/wait.h>
#endif

#define PCI_IDS_DEFAULT "/usr/share/misc/pci.ids"

/* ---- small file helpers -------------------------------------------------- */

/* Read a small file under root into buf, without the trailing newline;
 * 0 on success, -1 when it is missing or empty. */
static int read_text(const char *root, const char *path, char *buf, size_t size)
{
    char full[512];
    snprintf(full, sizeof full, "%s/%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return n ? 0 : -1;
}

/* A hex or decimal number from a sysfs file; -1 when missing or garbage. */
static long read_number(const char *root, const char *path, int base)
{
    char text[64], *end;
    if (read_text(root, path, text, sizeof text) < 0)
        return -1;
    long v = strtol(text, &end, base);
    return end == text || *end ? -1 : v;
}

int rt__cpulist_parse(const char *list, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = list;
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p || lo < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p || hi < lo)
                return -1;
        }
        for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        if (*end && *end != ',')
            return -1;
        p = *end ? end + 1 : end;
    }
    return CPU_COUNT(set) ? 0 : -1;
}

/* ---- which devices count ------------------------------------------------- */

static int is_display(unsigned cls)
{
    unsigned base = cls >> 8, sub = cls & 0xff;
    return (base == 0x03 && (sub == 0x00 || sub == 0x02 || sub == 0x80)) ||
           base == 0x12;
}

/* NVIDIA's GPUs are VGA or 3D controllers; its audio, bridge and NVSwitch
 * functions share the vendor id and are not GPUs.  Gaudi devices are
 * processing accelerators.  Neuron devices, TPU chips and Ascend NPUs are
 * found in their own trees. */
static int classify(rt__device *d)
{
    unsigned base = d->pci_class >> 8, sub = d->pci_class & 0xff;
    d->cores = 1;
    if (d->vendor == RT__VENDOR_NVIDIA && base == 0x03 && (sub == 0x00 || sub == 0x02))
        d->kind = RT__FAM_NVIDIA;
    else if (d->vendor == RT__VENDOR_AMD && is_display(d->pci_class))
        d->kind = RT__FAM_AMD;
    else if (d->vendor == RT__VENDOR_INTEL && is_display(d->pci_class))
        d->kind = RT__FAM_INTEL;
    else if (d->vendor == RT__VENDOR_HABANA && base == 0x12)
        d->kind = RT__FAM_HPU;
    else
        return 0;
    return 1;
}

/* ---- names and types ------------------------------------------------------ */

/* What the NVIDIA driver says of a GPU: its model and UUID. */
static void driver_info(const char *root, rt__device *d)
{
    char path[128], text[2048];
    snprintf(path, sizeof path, "proc/driver/nvidia/gpus/%s/information", d->bus_id);
    char full[512];
    snprintf(full, sizeof full, "%s/%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return;
    while (fgets(text, sizeof text, f)) {
        char *colon = strchr(text, ':');
        if (!colon)
            continue;
        char *value = colon + 1 + strspn(colon + 1, " \t");
        value[strcspn(value, "\n")] = '\0';
        if (strncmp(text, "Model:", 6) == 0)
            snprintf(d->model, sizeof d->model, "%s", value);
        else if (strncmp(text, "GPU UUID:", 9) == 0)
            snprintf(d->uuid, sizeof d->uuid, "%s", value);
    }
    fclose(f);
}

/* The model and type of a PCI device.  Ray types AMD GPUs by device id
 * alone; the others by the model's name where it gives one. */
static void name_device(const char *root, const char *db, rt__device *d)
{
    if (d->vendor == RT__VENDOR_NVIDIA)
        driver_info(root, d);
    if (!d->model[0])
        rt__pci_ids_name(db, d->vendor, d->device, d->model, sizeof d->model);
    if (d->kind == RT__FAM_NVIDIA)
        rt__accelerator_type(d->model, d->type, sizeof d->type);
    else if (d->kind == RT__FAM_INTEL)
        rt__intel_type(d->model, d->type, sizeof d->type);
    if (!d->type[0])
        snprintf(d->type, sizeof d->type, "%s", rt__type_by_id(d->vendor, d->device));
}

/* ---- the sysfs path -------------------------------------------------------- */

/* Bus ids look like 0000:3b:00.0; anything else in the directory is not a
 * PCI function. */
static int is_bus_id(const char *s)
{
    unsigned dom, bus, dev, fn;
    char end;
    return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn,
                                     &end) == 4;
}

/* Whether the machine has a single NUMA node, where a device whose
 * numa_node says -1 (as virtual machines' do) is local to node 0, as
 * hwloc places it. */
static int one_numa_node(const char *root)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sys/devices/system/node", root);
    DIR *dir = opendir(path);
    int nodes = 0;
    for (struct dirent *e; dir && (e = readdir(dir));)
        nodes += strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4]);
    if (dir)
        closedir(dir);
    return nodes == 1;
}

static int read_pci_function(const char *root, const char *bus_id, rt__device *d)
{
    char path[256];
    long v[3];
    const char *file[3] = {"vendor", "device", "class"};
    memset(d, 0, sizeof *d);
    snprintf(d->bus_id, sizeof d->bus_id, "%.12s", bus_id); /* is_bus_id() checked */
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "sys/bus/pci/devices/%s/%s", d->bus_id, file[i]);
        if ((v[i] = read_number(root, path, 16)) < 0) {
            rt__warn("%s/%s: missing or not a number; device skipped", root, path);
            return -1;
        }
    }
    d->vendor = (unsigned)v[0];
    d->device = (unsigned)v[1];
    d->pci_class = (unsigned)v[2] >> 8; /* without the programming interface */
    snprintf(path, sizeof path, "sys/bus/pci/devices/%s/numa_node", d->bus_id);
    long node = read_number(root, path, 10);
    d->numa_node = node >= 0 ? (int)node : one_numa_node(root) ? 0 : -1;
    snprintf(path, sizeof path, "sys/bus/pci/devices/%s/local_cpulist", d->bus_id);
    cpu_set_t set;
    if (read_text(root, path, d->cpus, sizeof d->cpus) == 0 &&
        rt__cpulist_parse(d->cpus, &set) < 0) {
        rt__warn("%s/%s: \"%s\" is not a CPU list; ignored", root, path, d->cpus);
        d->cpus[0] = '\0';
    }
    return 0;
}

/* Whether the KFD topology, which ROCm counts GPUs by, has the device:
 * a node's properties name its PCI domain and location (bus << 8 | slot
 * << 3 | function). */
static int in_kfd_topology(const char *root, const rt__device *d)
{
    unsigned domain, bus, slot, fn;
    if (sscanf(d->bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &fn) != 4)
        return 0;
    char path[512];
    snprintf(path, sizeof path, "%s/sys/class/kfd/kfd/topology/nodes", root);
    DIR *dir = opendir(path);
    int found = 0;
    for (struct dirent *e; dir && !found && (e = readdir(dir));) {
        char file[1024], line[128];
        snprintf(file, sizeof file, "%s/%s/properties", path, e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(file, "r") : NULL;
        long dom = -1, loc = -1;
        while (f && fgets(line, sizeof line, f)) {
            sscanf(line, "domain %ld", &dom);
            sscanf(line, "location_id %ld", &loc);
        }
        if (f)
            fclose(f);
        found = dom == (long)domain && loc == (long)(bus << 8 | slot << 3 | fn);
    }
    if (dir)
        closedir(dir);
    return found;
}

/* Whether an AMD or Intel display device can run compute work: bound to
 * the driver that runs it (amdgpu; i915 or xe), or, for AMD, in the KFD
 * topology.  A server's BMC display controller (an ATI ES1000, say) is
 * of the display class too, and can compute nothing. */
static int computes(const char *root, const rt__device *d)
{
    char path[512], target[256];
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/driver", root, d->bus_id);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        const char *driver = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
        if (d->kind == RT__FAM_AMD ? strcmp(driver, "amdgpu") == 0
                                   : strcmp(driver, "i915") == 0 || strcmp(driver, "xe") == 0)
            return 1;
    }
    return d->kind == RT__FAM_AMD && in_kfd_topology(root, d);
}

/* A device of a family rtask schedules that can work as one. */
static int usable(const char *root, rt__device *d)
{
    if (!classify(d))
        return 0;
    return (d->kind != RT__FAM_AMD && d->kind != RT__FAM_INTEL) || computes(root, d);
}

static void add_device(rt__machine *m, const rt__device *d)
{
    if (m->count < RT__DEVICE_MAX)
        m->dev[m->count++] = *d;
}

static void read_sysfs(const char *root, rt__machine *m)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices", root);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir));) {
        rt__device d;
        if (is_bus_id(e->d_name) && read_pci_function(root, e->d_name, &d) == 0 &&
            usable(root, &d))
            add_device(m, &d);
    }
    closedir(dir);
    snprintf(m->source, sizeof m->source, "sysfs");
}

/* ---- the hwloc path -------------------------------------------------------- */

#ifdef RT_HAVE_HWLOC
static void locality(hwloc_topology_t t, hwloc_obj_t o, rt__device *d)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
    d->numa_node = -1;
    if (!anc)
        return;
    if (anc->cpuset)
        hwloc_bitmap_list_snprintf(d->cpus, sizeof d->cpus, anc->cpuset);
    if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
        d->numa_node = hwloc_bitmap_first(anc->nodeset);
}

/* Load the topology, from xml when given.  0 or -1. */
static int load_topology(hwloc_topology_t t, const char *xml)
{
    hwloc_topology_set_type_filter(t, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* The Linux backend reads PCI from sysfs by itself; the "pci"
     * component (libpciaccess) finds the same devices and leaks about
     * 400 KB per load, which an application that starts and stops the
     * runtime again and again would pile up. */
#if HWLOC_API_VERSION >= 0x00020100
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
    /* An exported file's OS devices name its GPUs.  On this machine NVML
     * does (nvml.h), and hwloc's own discovery of every block and network
     * device is only slower (and upsets LeakSanitizer's thread stopper). */
    if (xml)
        hwloc_topology_set_type_filter(t, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
    return (xml && hwloc_topology_set_xml(t, xml) < 0) || hwloc_topology_load(t) < 0
               ? -1 : 0;
}

/* Some malformed XML files crash hwloc 2.9's loader itself (found by
 * fuzzing): try a file in a child first, so that a bad one is refused
 * with a warning, never the death of the application. */
static int xml_loads_safely(const char *xml)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* Die of the crash: no handler of the application's runs here. */
        static const int crashes[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
            signal(crashes[i], SIG_DFL);
        hwloc_topology_t t;
        _exit(hwloc_topology_init(&t) == 0 && load_topology(t, xml) == 0 ? 0 : 1);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1; /* cannot tell: load it here */
    return !WIFSIGNALED(status);
}

/* What the GPU's OS devices (hwloc's CUDA, NVML, OpenCL backends, as
 * topologies exported on real machines carry them) know: its exact model,
 * "Tesla V100-SXM3-32GB-H", better than the PCI database's, and its UUID. */
static void os_devices_info(hwloc_obj_t pci, rt__device *d)
{
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        const char *model = hwloc_obj_get_info_by_name(c, "GPUModel");
        const char *uuid = hwloc_obj_get_info_by_name(c, "NVIDIAUUID");
        if (model && *model)
            snprintf(d->model, sizeof d->model, "%s", model);
        if (uuid && *uuid && !d->uuid[0])
            snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    }
}

/* Another machine's AMD or Intel display device (an XML file has no
 * sysfs to ask) computes when hwloc found a compute device on it: ROCm
 * SMI's GPU ("rsmi0"), or an OpenCL or Level Zero co-processor. */
static int os_devices_compute(hwloc_obj_t pci, const rt__device *d)
{
    if (d->kind != RT__FAM_AMD && d->kind != RT__FAM_INTEL)
        return 1;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE &&
            (c->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC ||
             (c->name && strncmp(c->name, "rsmi", 4) == 0)))
            return 1;
    return 0;
}

/* Why hwloc cannot use an XML file: RT_EINVAL with a message.  A file
 * written by hwloc 3.x says version="3..." in its first lines. */
static int xml_error(const char *xml, const char *what)
{
    char head[512], version[32];
    FILE *f = fopen(xml, "r");
    if (!f)
        return rt__error(RT_EINVAL, "rt_init: the hwloc topology %s cannot be read: %s",
                         xml, strerror(errno));
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    rt__detect_hwloc_version(version, sizeof version);
    if (strstr(head, "version=\"3."))
        return rt__error(RT_EINVAL, "rt_init: the hwloc topology %s was written by hwloc "
                         "3.x, which this hwloc (%s) cannot read", xml, version);
    return rt__error(RT_EINVAL, "rt_init: hwloc %s the topology %s", what, xml);
}

/* Devices through hwloc: 0, or -1 when it fails (for an XML file, with
 * an error set: the file's machine is not this one, so there is no
 * falling back to this machine's sysfs). */
static int read_hwloc(const char *xml, rt__machine *m)
{
    hwloc_topology_t t;
    if (xml && !xml_loads_safely(xml)) {
        xml_error(xml, "crashes reading");
        return -1;
    }
    if (hwloc_topology_init(&t) < 0)
        return xml ? xml_error(xml, "could not start to read") : -1;
    if (load_topology(t, xml) < 0) {
        hwloc_topology_destroy(t);
        if (xml)
            return xml_error(xml, "could not load");
        rt__warn("hwloc could not load the topology; trying PCI sysfs");
        return -1;
    }
    int seen = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o)); seen++) {
        rt__device d = {0};
        struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;
        snprintf(d.bus_id, sizeof d.bus_id, "%04x:%02x:%02x.%01x", a->domain, a->bus,
                 a->dev, a->func);
        d.vendor = a->vendor_id;
        d.device = a->device_id;
        d.pci_class = a->class_id;
        const char *name = hwloc_obj_get_info_by_name(o, "PCIDevice");
        if (name)
            snprintf(d.model, sizeof d.model, "%s", name);
        os_devices_info(o, &d);
        locality(t, o, &d);
        if (xml ? classify(&d) && os_devices_compute(o, &d) : usable("/", &d))
            add_device(m, &d);
    }
    hwloc_topology_destroy(t);
    snprintf(m->source, sizeof m->source, "%s", xml ? "hwloc XML" : "hwloc");
    return seen || xml ? 0 : -1; /* here, no PCI device at all: hwloc saw no I/O */
}
#endif

/* ---- Neuron ----------------------------------------------------------------- */

static void read_neuron(const char *root, rt__machine *m)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sys/devices/virtual/neuron_device", root);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir));) {
        if (strncmp(e->d_name, "neuron", 6) != 0 || !isdigit((unsigned char)e->d_name[6]))
            continue;
        char file[512];
        snprintf(file, sizeof file, "sys/devices/virtual/neuron_device/%.64s/core_count",
                 e->d_name);
        long cores = read_number(root, file, 10);
        if (cores <= 0 || cores > 1024) {
            rt__warn("%s/%s: missing or not a core count; device skipped", root, file);
            continue;
        }
        rt__device d = {.kind = RT__FAM_NEURON, .numa_node = -1, .cores = (int)cores};
        snprintf(d.bus_id, sizeof d.bus_id, "%.15s", e->d_name);
        snprintf(d.type, sizeof d.type, "aws-neuron-core");
        snprintf(file, sizeof file,
                 "sys/devices/virtual/neuron_device/%.64s/info/architecture/device_name",
                 e->d_name);
        read_text(root, file, d.model, sizeof d.model);
        d.vendor = RT__VENDOR_AMAZON;
        add_device(m, &d);
    }
    closedir(dir);
}

/* ---- TPU chips and Ascend NPUs: device files ---------------------------------- */

/* Whether name is prefix and a number: "accel3", "davinci0". */
static int numbered(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && name[n] &&
           strspn(name + n, "0123456789") == strlen(name + n) && strlen(name + n) < 6;
}

/* One device of family f per numbered file in dir; returns how many. */
static int read_dev_files(const char *root, rt__machine *m, rt__family f, const char *dir,
                          const char *prefix, const char *type)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    DIR *d = opendir(path);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!numbered(e->d_name, prefix))
            continue;
        rt__device dev = {.kind = f, .numa_node = -1, .cores = 1};
        snprintf(dev.bus_id, sizeof dev.bus_id, "%.15s", e->d_name);
        snprintf(dev.type, sizeof dev.type, "%s", type);
        snprintf(dev.model, sizeof dev.model, "%s", type);
        add_device(m, &dev);
        found++;
    }
    if (d)
        closedir(d);
    return found;
}

/* The TPU generation of the first Google function in PCI sysfs. */
static const char *tpu_type(const char *root)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices", root);
    DIR *dir = opendir(path);
    const char *type = "";
    for (struct dirent *e; dir && !*type && (e = readdir(dir));) {
        char file[64];
        snprintf(file, sizeof file, "sys/bus/pci/devices/%.12s/vendor", e->d_name);
        if (!is_bus_id(e->d_name) || read_number(root, file, 16) != RT__VENDOR_GOOGLE)
            continue;
        snprintf(file, sizeof file, "sys/bus/pci/devices/%.12s/device", e->d_name);
        long device = read_number(root, file, 16);
        type = rt__type_by_id(RT__VENDOR_GOOGLE, device < 0 ? 0 : (unsigned)device);
    }
    if (dir)
        closedir(dir);
    return type;
}

/* A TPU VM's chips are /dev/accelN (v2 to v4) or VFIO groups /dev/vfio/N
 * (v5 and later), as Ray counts them; Ascend NPUs are /dev/davinciN. */
static void read_dev_trees(const char *root, rt__machine *m)
{
    const char *tpu = tpu_type(root);
    if (!read_dev_files(root, m, RT__FAM_TPU, "dev", "accel", tpu) && *tpu)
        read_dev_files(root, m, RT__FAM_TPU, "dev/vfio", "", tpu);
    read_dev_files(root, m, RT__FAM_NPU, "dev", "davinci", "");
}

/* ---- putting it together ---------------------------------------------------- */

static int by_kind_then_bus(const void *a, const void *b)
{
    const rt__device *x = a, *y = b;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    /* neuron10 after neuron9 */
    size_t lx = strlen(x->bus_id), ly = strlen(y->bus_id);
    return lx != ly ? (lx > ly) - (lx < ly) : strcmp(x->bus_id, y->bus_id);
}

/* A root given in place of "/" that is not a directory is a mistake (a
 * typed path): refused, since zero GPUs would otherwise look like a
 * machine without. */
static int check_root(const char *root)
{
    struct stat st;
    if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))
        return rt__error(RT_EINVAL, "rt_init: the sysfs root %s (rt_config.sysfs_root or "
                         "RTASK_SYSFS_ROOT) is not a directory", root);
    return 0;
}

int rt__detect(const rt__detect_opts *opts, rt__machine *m)
{
    const char *root = opts && opts->root ? opts->root : getenv("RTASK_SYSFS_ROOT");
    const char *xml = opts && opts->hwloc_xml ? opts->hwloc_xml : getenv("RTASK_HWLOC_XML");
    const char *db = opts && opts->pci_ids ? opts->pci_ids : getenv("RTASK_PCI_IDS");
    memset(m, 0, sizeof *m);
    if (!root || !*root)
        root = "/";
    else if (strcmp(root, "/") != 0 && check_root(root) < 0)
        return RT_EINVAL;
    if (!db)
        db = PCI_IDS_DEFAULT;
    snprintf(m->source, sizeof m->source, "sysfs");
    if (xml && *xml) {
        /* Another machine's topology: its devices alone, or an error. */
#ifdef RT_HAVE_HWLOC
        if (read_hwloc(xml, m) < 0)
            return RT_EINVAL;
#else
        return rt__error(RT_EINVAL, "rt_init: the hwloc topology %s: rtask was built "
                         "without hwloc, which alone reads topologies", xml);
#endif
    } else {
        /* hwloc cannot read another root: a fake tree is read through sysfs. */
        int use_hwloc = !(opts && opts->no_hwloc) && strcmp(root, "/") == 0;
#ifdef RT_HAVE_HWLOC
        if (!use_hwloc || read_hwloc(NULL, m) < 0) {
            m->count = 0;
            read_sysfs(root, m);
        }
#else
        (void)use_hwloc;
        read_sysfs(root, m);
#endif
        read_neuron(root, m);
        read_dev_trees(root, m);
    }
    for (int i = 0; i < m->count; i++)
        name_device(root, db, &m->dev[i]);
    /* NVML describes this machine: not a fake tree's, nor a file's. */
    const char *nvml = getenv("RTASK_NVML_LIBRARY");
    if ((((!xml || !*xml) && strcmp(root, "/") == 0) || (nvml && *nvml)) &&
        rt__nvml_complete(m, root) >= 0)
        strcat(m->source, "+NVML");
    qsort(m->dev, (size_t)m->count, sizeof *m->dev, by_kind_then_bus);
    return 0;
}

int rt__machine_instances(const rt__machine *m, rt__family f)
{
    int n = 0;
    for (int i = 0; i < m->count; i++)
        n += m->dev[i].kind == f ? m->dev[i].cores : 0;
    return n;
}

const rt__device *rt__machine_nth(const rt__machine *m, rt__family f, int i)
{
    for (int k = 0; k < m->count; k++)
        if (m->dev[k].kind == f && i-- == 0)
            return &m->dev[k];
    return NULL;
}

void rt__device_describe(const rt__device *d, int index, char *buf, size_t size)
{
    char numa[16] = "-";
    if (d->numa_node >= 0)
        snprintf(numa, sizeof numa, "%d", d->numa_node);
    int n = snprintf(buf, size, "%s %d: %s %04x:%04x \"%s\" type %s numa %s cpus %s",
                     rt__families[d->kind].name, index, d->bus_id, d->vendor, d->device,
                     d->model[0] ? d->model : "?", d->type[0] ? d->type : "?", numa,
                     d->cpus[0] ? d->cpus : "-");
    if (d->kind == RT__FAM_NEURON && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " cores %d", d->cores);
    if (d->memory_mib && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " memory %llu MiB", d->memory_mib);
    if (d->cc_major && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " cc %d.%d", d->cc_major, d->cc_minor);
    if (d->unhealthy[0] && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " UNHEALTHY (%s)", d->unhealthy);
}

void rt__detect_hwloc_version(char *buf, size_t size)
{
#ifdef RT_HAVE_HWLOC
    unsigned v = hwloc_get_api_version();
    snprintf(buf, size, "API %u.%u", v >> 16, (v >> 8) & 0xff);
#else
    snprintf(buf, size, "%s", "");
#endif
}
