/* objects.c - rt_put(), rt_get_view(), rt_view_release() and rt_free(). */
#include "base/error.h"
#include "base/alloc.h"
#include "base/shm.h"
#include "node/client.h"
#include "runtime/calls.h"

#include "front.h"

#include <string.h>

RT_EXPORT int rt_put(const void *data, size_t len, rt_ref *ref)
{
    if (!ref || (!data && len))
        return rt__error(RT_EINVAL, "rt_put: %s is NULL", !ref ? "ref" : "data");
    if (rt__check_len("rt_put", "len", len) < 0)
        return RT_EINVAL;
    return rt__front_here()->put(data, len, ref);
}

int rt__app_put(const void *data, size_t len, rt_ref *ref)
{
    rt__task *o;
    /* Refused before a byte is copied: no shared memory made in vain. */
    int rc = rt__call_fits(rt__runtime_here(), len, "rt_put");
    if (rc == 0)
        rc = rt__task_new_object(data, len, &o);
    if (rc == 0)
        rt__call_key_object(rt__runtime_here(), o, data, len);
    return rc < 0 ? rc : rt__call_put(rt__runtime_here(), o, ref);
}

/* In a task, a view is the object's bytes in a buffer of its own: mapped
 * privately when the object is in shared memory (no copy), else copied. */
#define TASK_VIEW UINT64_MAX

int rt__task_view(rt_ref ref, rt_view *view, long timeout_ms)
{
    void *data;
    size_t len;
    int rc = rt__client_get(ref, &data, &len, timeout_ms, 1);
    if (rc == 0 || rc == RT_ETASK)
        *view = (rt_view){data, len, TASK_VIEW};
    return rc;
}

RT_EXPORT int rt_get_view(rt_ref ref, rt_view *view, long timeout_ms)
{
    if (!view)
        return rt__error(RT_EINVAL, "rt_get_view: view is NULL");
    memset(view, 0, sizeof *view);
    return rt__front_here()->view(ref, view, timeout_ms);
}

int rt__app_view(rt_ref ref, rt_view *view, long timeout_ms)
{
    return rt__call_view(rt__runtime_here(), ref, timeout_ms, view);
}

int rt__app_view_release(const rt_view *view)
{
    return rt__call_view_release(rt__runtime_here(), view->id_);
}

int rt__task_view_release(const rt_view *view)
{
    if (view->id_ != TASK_VIEW)
        return rt__error(RT_EBADREF, "rt_view_release: not a view, or released already");
    rt__buf_free((void *)view->data);
    return 0;
}

RT_EXPORT int rt_view_release(rt_view *view)
{
    if (!view)
        return rt__error(RT_EINVAL, "rt_view_release: view is NULL");
    int rc = rt__front_here()->view_release(view);
    memset(view, 0, sizeof *view);
    return rc;
}

RT_EXPORT void rt_free(void *data)
{
    rt__buf_free(data);
}
