/* proxy.h - the application's side of the calls tasks make (proxy.c). */
#ifndef RT_PROXY_H
#define RT_PROXY_H

/* The runtime thread: a worker's thread knocks at door; serve its calls. */
void rt__proxies_accept(int door);
/* After the runtime stops: end every connection, join every thread. */
void rt__proxies_stop(void);

#endif
