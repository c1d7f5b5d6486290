/*
 * nvml_abi.h - NVML's own types, as its header declares them (the v2 and
 * v3 calls rtask makes): the ABI is stable, and declaring them here spares
 * a build dependency.  nvml.c uses them, and so does the fake library of
 * the tests (test/fake/nvml.c).
 */
#ifndef RT_NVML_ABI_H
#define RT_NVML_ABI_H

typedef struct nvml_device *nvml_device;
typedef struct nvml_event_set *nvml_event_set;

typedef struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;

typedef struct nvml_memory {
    unsigned long long total, free, used;
} nvml_memory;

/* nvmlEventData_t */
typedef struct nvml_event_data {
    nvml_device device;
    unsigned long long event_type;
    unsigned long long event_data;      /* an XID's number */
    unsigned gpu_instance_id, compute_instance_id; /* MIG; 0xffffffff: none */
} nvml_event_data;

/* nvmlProcessInfo_t (v3 calls) */
typedef struct nvml_process_info {
    unsigned pid;
    unsigned long long used_gpu_memory; /* bytes */
    unsigned gpu_instance_id, compute_instance_id;
} nvml_process_info;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH 18
#define NVML_ERROR_UNKNOWN 999

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96

#define NVML_EVENT_SINGLE_BIT_ECC 0x0001ull
#define NVML_EVENT_DOUBLE_BIT_ECC 0x0002ull
#define NVML_EVENT_XID_CRITICAL 0x0008ull

#endif
