/* void_cast.c - the public header as users compile it: a (void) cast
 * silences RT_NODISCARD with every compiler and standard that make
 * check-header tries, and -pedantic finds nothing in the header.  With
 * -DIGNORED the results are dropped without a cast, which must warn. */
#include <rtask.h>

int main(void)
{
    rt_ref ref = {1};
#ifdef IGNORED
    rt_cancel(ref, 0);
#else
    (void)rt_cancel(ref, 0);
    (void)rt_get(ref, NULL, NULL, 0);
    (void)rt_init(0);
#endif
    return 0;
}
