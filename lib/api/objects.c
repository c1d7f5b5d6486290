/* objects.c - rt_put(), rt_get_view() and rt_view_release(). */
#include "base/error.h"
#include "base/process.h"
#include "runtime/calls.h"

#include <string.h>

RT_EXPORT int rt_put(const void *data, size_t len, rt_ref *ref)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_put: not available inside a task");
    if (!ref || (!data && len))
        return rt__error(RT_EINVAL, "rt_put: %s is NULL", !ref ? "ref" : "data");
    rt__task *o;
    int rc = rt__task_new_object(data, len, &o);
    return rc < 0 ? rc : rt__call_put(rt__runtime_here(), o, ref);
}

RT_EXPORT int rt_get_view(rt_ref ref, rt_view *view, long timeout_ms)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_get_view: not available inside a task");
    if (!view)
        return rt__error(RT_EINVAL, "rt_get_view: view is NULL");
    memset(view, 0, sizeof *view);
    rt__runtime *rt = rt__runtime_here();
    rt__task *o;
    uint64_t id;
    int rc = rt__call_view(rt, ref, timeout_ms, &o, &id);
    if (rc < 0)
        return rc;
    /* A failed task's result bytes explain its failure: RT_ETASK has
     * them; the other failures have none, and no view. */
    rc = rt__task_explain(o);
    if (rc < 0 && rc != RT_ETASK) {
        (void)rt__call_view_release(rt, id);
        return rc;
    }
    *view = (rt_view){o->result, o->result_len, id};
    return rc;
}

RT_EXPORT int rt_view_release(rt_view *view)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_view_release: not available inside a task");
    if (!view)
        return rt__error(RT_EINVAL, "rt_view_release: view is NULL");
    int rc = rt__call_view_release(rt__runtime_here(), view->id_);
    memset(view, 0, sizeof *view);
    return rc;
}
