/*
 * nvml_abi.h - NVML's own types, as its header declares them (the v2 and
 * v3 calls rtask makes): the ABI is stable, and declaring them here spares
 * a build dependency.  nvml.c uses them, and so does the fake library of
 * the tests (test/fake/nvml.c).
 */
#ifndef RT_NVML_ABI_H
#define RT_NVML_ABI_H

typedef struct nvml_device *nvml_device;

typedef struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;

typedef struct nvml_memory {
    unsigned long long total, free, used;
} nvml_memory;

#define NVML_SUCCESS 0

#endif
