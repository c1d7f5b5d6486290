/* init.c - rt_init(), rt_shutdown() and what goes with them (rt_version,
 * rt_opts_init, errors' texts); the runtime's life itself is
 * runtime/life.c's. */
#include "base/error.h"
#include "runtime/calls.h"

#include "front.h"
#include "proxy.h"
#include "statusd.h"

#define STR_(x) #x
#define STR(x) STR_(x)

RT_EXPORT const char *rt_version(void)
{
    return STR(RT_VERSION_MAJOR) "." STR(RT_VERSION_MINOR) "." STR(RT_VERSION_PATCH);
}

RT_EXPORT void rt_config_init(rt_config *config)
{
    rt_config init = RT_CONFIG_INIT;
    *config = init;
}

RT_EXPORT int rt_init_config(const rt_config *config)
{
    int rc = rt__front_here()->application_only("rt_init", "a task runs in the "
                                                "application's runtime already");
    if (rc < 0)
        return rc;
    rt__door_hooks hooks = {rt__proxies_serve, rt__proxies_stop, rt__statusd_start,
                            rt__statusd_stop};
    return rt__runtime_start(rt__runtime_here(), config, hooks);
}

RT_EXPORT int rt_init(double num_gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = num_gpus;
    return rt_init_config(&c);
}

RT_EXPORT int rt_shutdown(void)
{
    int rc = rt__front_here()->application_only("rt_shutdown", "the application's runtime "
                                                "is the application's to stop");
    return rc < 0 ? rc : rt__runtime_stop(rt__runtime_here());
}

RT_EXPORT void rt_opts_init(rt_opts *opts)
{
    rt_opts init = RT_OPTS_INIT;
    *opts = init;
}

RT_EXPORT const char *rt_strerror(int code)
{
    return rt__strerror(code);
}

RT_EXPORT const char *rt_last_error(void)
{
    return rt__last_error();
}
