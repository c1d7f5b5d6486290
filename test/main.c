/* main.c - run every suite of the rtask tests. */
#include "tests.h"

#include <stdlib.h>

int main(void)
{
    /* Every runtime the tests start detects a machine without devices,
     * whatever this one has (a test that wants devices names a fake
     * machine, or "/" itself). */
    setenv("RTASK_SYSFS_ROOT", "test/fake/none", 0);
    SRunner *sr = srunner_create(api_suite());
    srunner_add_suite(sr, tasks_suite());
    srunner_add_suite(sr, workers_suite());
    srunner_add_suite(sr, resources_suite());
    srunner_add_suite(sr, placement_suite());
    srunner_add_suite(sr, actors_suite());
    srunner_add_suite(sr, detect_suite());
    srunner_add_suite(sr, families_suite());
    srunner_add_suite(sr, sharing_suite());
    srunner_add_suite(sr, cancel_suite());
    srunner_add_suite(sr, timeline_suite());
    srunner_add_suite(sr, core_suite());
    srunner_add_suite(sr, wire_suite());
    srunner_add_suite(sr, alloc_suite());
    srunner_add_suite(sr, hostile_suite());
    srunner_add_suite(sr, loop_suite());
    srunner_add_suite(sr, node_suite());
    srunner_add_suite(sr, objects_suite());
    srunner_add_suite(sr, nested_suite());
    srunner_add_suite(sr, labels_suite());
    srunner_add_suite(sr, groups_suite());
    srunner_add_suite(sr, health_suite());
    srunner_add_suite(sr, isolation_suite());
    srunner_add_suite(sr, state_suite());
    srunner_add_suite(sr, returns_suite());
    srunner_add_suite(sr, checkpoint_suite());
    return run_and_free(sr);
}
