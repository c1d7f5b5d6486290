/* proxy.h - the application's side of the calls tasks make (proxy.c). */
#ifndef RT_PROXY_H
#define RT_PROXY_H

/* The runtime thread: serve the calls that come on connection, a
 * stream socket (now the proxies'), from a worker here (rank 0) or on
 * another rank, whose tunnel alone may make a PUT_HELD. */
void rt__proxies_serve(int connection, int rank);
/* After the runtime stops: end every connection, join every thread. */
void rt__proxies_stop(void);

#endif
