// epoll and TCP options for the load tool (not exported by Swift's Glibc module).
#include <sys/epoll.h>
#include <netinet/tcp.h>
