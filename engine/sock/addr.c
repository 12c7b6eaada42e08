/* Socket addresses as text, errno to status, what an fd is. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "engine/sock/sock_internal.h"

tern_status_t tern_sock_errno_status(int err)
{
    switch (err) {
    case ECONNREFUSED:
        return TERN_ERR_CONN_REFUSED;
    case ECONNRESET:
    case ECONNABORTED:
        return TERN_ERR_CONN_RESET;
    case EPIPE:
        return TERN_ERR_CONN_CLOSED;
    case ETIMEDOUT:
        return TERN_ERR_TIMED_OUT;
    case EADDRINUSE:
        return TERN_ERR_ADDR_IN_USE;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
    case EADDRNOTAVAIL:
        return TERN_ERR_HOST_UNREACH;
    case ENOMEM:
    case ENOBUFS:
        return TERN_ERR_NO_MEMORY;
    case EAGAIN:
        return TERN_ERR_AGAIN;
    case EINVAL:
    case EBADF:
    case ENOTSOCK:
    case EAFNOSUPPORT:
        return TERN_ERR_INVALID_PARAM;
    default:
        return TERN_ERR_IO;
    }
}

/* "1.2.3.4:port", "[v6]:port" ("%ifname" kept for link-local); an IPv4
 * address mapped into IPv6 prints as IPv4. */
void tern_sock_format_addr(const struct sockaddr *sa, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        snprintf(out, len, "%s:%d", host, ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
            snprintf(out, len, "%s:%d", host, ntohs(in6->sin6_port));
            return;
        }
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        char ifname[IF_NAMESIZE];
        if (in6->sin6_scope_id != 0 && if_indextoname(in6->sin6_scope_id, ifname) != NULL)
            snprintf(host + strlen(host), sizeof(host) - strlen(host), "%%%s", ifname);
        snprintf(out, len, "[%s]:%d", host, ntohs(in6->sin6_port));
    } else if (sa->sa_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
        snprintf(out, len, "unix:%s", un->sun_path[0] ? un->sun_path : "(unnamed)");
    } else {
        snprintf(out, len, "(address family %d)", sa->sa_family);
    }
}

/* Name an adopted fd by its peer ("addr:port", "fd N (unix socket)",
 * "non-socket fd N" for a pipe) and tell whether it is a socket. */
void tern_sock_describe_fd(int fd, char *out, size_t len, bool *is_socket)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int type;
    socklen_t tl = sizeof(type);
    *is_socket = getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0;
    if (!*is_socket) {
        snprintf(out, len, "non-socket fd %d", fd);
        return;
    }
    memset(&ss, 0, sizeof(ss));
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0) {
        snprintf(out, len, "fd %d (unconnected socket)", fd);
    } else if (ss.ss_family == AF_UNIX) {
        snprintf(out, len, "fd %d (unix socket)", fd);
    } else {
        tern_sock_format_addr((struct sockaddr *)&ss, out, len);
    }
}

const char *tern_sock_op_name(const tern_sock_t *s, const tern_sock_xfer_t *x)
{
    return x == &s->rd ? "read" : "write";
}
