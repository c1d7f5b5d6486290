/* front.c - the application's table and a task's (front.h). */
#include "front.h"

#include "base/error.h"
#include "base/process.h"
#include "node/client.h"

static int anywhere(const char *call, const char *why)
{
    (void)call, (void)why;
    return 0;
}

static int not_in_a_task(const char *call, const char *why)
{
    return rt__error(RT_EINWORKER, "%s: %s", call, why);
}

static int app_yield(const void *data, size_t len)
{
    (void)data, (void)len;
    return rt__error(RT_EINVAL, "rt_yield: only a running task yields results");
}

static int app_node(void)
{
    return 0;
}

static int task_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    return rt__client_get(ref, data, len, timeout_ms, 0);
}

static const rt__front application = {
    .application_only = anywhere,
    .submit = rt__app_submit,
    .submit_batch = rt__app_submit_batch,
    .get = rt__app_get,
    .wait = rt__app_wait,
    .cancel = rt__app_cancel,
    .release = rt__app_release,
    .put = rt__app_put,
    .view = rt__app_view,
    .view_release = rt__app_view_release,
    .actor_kill = rt__app_actor_kill,
    .actor_restart = rt__app_actor_restart,
    .actor_get = rt__app_actor_get,
    .stream_next = rt__app_stream_next,
    .pg_create = rt__app_pg_create,
    .pg_wait = rt__app_pg_wait,
    .pg_remove = rt__app_pg_remove,
    .yield = app_yield,
    .node = app_node,
};

static const rt__front task = {
    .application_only = not_in_a_task,
    .submit = rt__client_submit,
    .submit_batch = rt__task_submit_batch,
    .get = task_get,
    .wait = rt__client_wait,
    .cancel = rt__client_cancel,
    .release = rt__client_release,
    .put = rt__client_put,
    .view = rt__task_view,
    .view_release = rt__task_view_release,
    .actor_kill = rt__client_kill,
    .actor_restart = rt__client_restart,
    .actor_get = rt__client_actor_get,
    .stream_next = rt__client_stream_next,
    .pg_create = rt__client_pg_create,
    .pg_wait = rt__client_pg_wait,
    .pg_remove = rt__client_pg_remove,
    .yield = rt__client_yield,
    .node = rt__task_node,
};

const rt__front *rt__front_here(void)
{
    return rt__process_forked() ? &task : &application;
}
