/*
 * detect.h - the machine's accelerators, of every family (family.h), with
 * model, accelerator type and locality.
 *
 * GPUs and Gaudi devices are PCI functions, read through hwloc (its PCI
 * objects and their non-I/O ancestors' cpusets) or, without hwloc, PCI
 * sysfs; Neuron devices come from their sysfs class, TPU chips from
 * /dev/accelN or /dev/vfio/N, Ascend NPUs from /dev/davinciN.  All is read
 * under a root that tests point at fake trees (or an hwloc XML file).
 * Nothing here fails on what it reads: what cannot be read is skipped
 * with a warning, never made up.
 */
#ifndef RT_DETECT_H
#define RT_DETECT_H

#include "machine.h"

#include <sched.h>
#include <stddef.h>

typedef struct rt__detect_opts {
    const char *root;       /* sysfs/procfs root; "/" = this machine */
    const char *hwloc_xml;  /* an hwloc topology to read instead; or NULL */
    const char *pci_ids;    /* the PCI id database; NULL = the system's */
    int no_hwloc;           /* read PCI sysfs even where hwloc could */
} rt__detect_opts;

/* Fill m.  The root comes from opts, else $RTASK_SYSFS_ROOT, else "/";
 * the XML from opts, else $RTASK_HWLOC_XML.  0, or RT_EINVAL with a
 * message when an XML topology was given and cannot be read (it is
 * another machine's: this one's devices would be wrong). */
int rt__detect(const rt__detect_opts *opts, rt__machine *m);
/* The API version of the hwloc rtask runs with ("API 2.8"), into buf; ""
 * when it was built without hwloc (PCI sysfs only). */
void rt__detect_hwloc_version(char *buf, size_t size);
/* How many instances of family f the machine has (a Neuron device
 * counts its cores). */
int rt__machine_instances(const rt__machine *m, rt__family f);
/* The i-th device of a family, or NULL. */
const rt__device *rt__machine_nth(const rt__machine *m, rt__family f, int i);
/* Parse a CPU list ("0-19,40-59") into set; -1 when it is not one or
 * names no CPU this kernel can bind to. */
int rt__cpulist_parse(const char *list, cpu_set_t *set);
/* One line per device, as rtask-info prints it. */
void rt__device_describe(const rt__device *d, int index, char *buf, size_t size);

#endif
