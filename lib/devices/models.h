/*
 * models.h - what a device is called and what accelerator type that
 * makes it: names from the PCI id database, and Ray's type rules
 * (python/ray/_private/accelerators/) for each vendor.  Pure functions of
 * their arguments, except that the database is a file.
 */
#ifndef RT_MODELS_H
#define RT_MODELS_H

#include <stddef.h>

#define RT__VENDOR_NVIDIA 0x10de
#define RT__VENDOR_AMD 0x1002
#define RT__VENDOR_INTEL 0x8086
#define RT__VENDOR_AMAZON 0x1d0f
#define RT__VENDOR_GOOGLE 0x1ae0
#define RT__VENDOR_HABANA 0x1da3

/* The device's name in the PCI id database db (pci.ids format), into
 * out; out is left as it was when the file or the entry is missing. */
void rt__pci_ids_name(const char *db, unsigned vendor, unsigned device, char *out,
                      size_t size);
/* The accelerator type of an NVIDIA model name, by Ray's rule ("Tesla
 * V100-SXM2-16GB" -> "V100", "NVIDIA GeForce RTX 4090" ->
 * "GeForce-RTX-4090") or, for pci.ids names ("GV100GL [Tesla V100 SXM2
 * 16GB]"), by the same rule on the part in brackets.  "" when none. */
void rt__accelerator_type(const char *model, char *type, size_t size);
/* An Intel GPU's type, Ray's "Intel-GPU-Max-1550"; type is left as it was
 * when the name has fewer than two words. */
void rt__intel_type(const char *model, char *type, size_t size);
/* The type a device id alone gives (AMD's, by Ray's table; TPUs, Gaudi;
 * NVIDIA GPUs newer than pci.ids), or "". */
const char *rt__type_by_id(unsigned vendor, unsigned device);

#endif
