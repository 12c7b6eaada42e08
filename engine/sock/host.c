/*
 * Host description: every address of the interfaces that are up, in the
 * order a peer should try them — non-loopback IPv4, global IPv6, link-local
 * IPv6 (with its %ifname scope), then loopback.  Duplicates are listed once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "engine/sock/sock_internal.h"

static int rank_of(const struct ifaddrs *ifa)
{
    if (ifa->ifa_flags & IFF_LOOPBACK)
        return 3;
    if (ifa->ifa_addr->sa_family == AF_INET)
        return 0;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
    return IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) ? 2 : 1;
}

static void addr_text(const struct ifaddrs *ifa, char *out, size_t len)
{
    if (ifa->ifa_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr, out,
                  (socklen_t)len);
        return;
    }
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
    inet_ntop(AF_INET6, &in6->sin6_addr, out, (socklen_t)len);
    if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) && ifa->ifa_name != NULL)
        snprintf(out + strlen(out), len - strlen(out), "%%%s", ifa->ifa_name);
}

/* Is tok one of the comma-separated entries of list? */
static bool listed(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = list; (p = strstr(p, tok)) != NULL; p++)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

tern_status_t tern_sock_get_host_description(char *buf, size_t len)
{
    struct ifaddrs *list;
    tern_status_t st = TERN_OK;
    if (buf == NULL || len == 0)
        return tern_error(TERN_ERR_INVALID_PARAM, "host description: no buffer");
    if (getifaddrs(&list) < 0)
        return tern_error(TERN_ERR_IO, "host description: getifaddrs: %s", strerror(errno));
    size_t used = 0;
    buf[0] = '\0';
    for (int rank = 0; rank < 4 && st == TERN_OK; rank++) {
        for (struct ifaddrs *ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
            char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
            if (ifa->ifa_addr == NULL || !(ifa->ifa_flags & IFF_UP) ||
                (ifa->ifa_addr->sa_family != AF_INET && ifa->ifa_addr->sa_family != AF_INET6) ||
                rank_of(ifa) != rank)
                continue;
            addr_text(ifa, text, sizeof(text));
            if (listed(buf, text))
                continue;
            size_t need = strlen(text) + (used ? 1 : 0);
            if (used + need + 1 > len) {
                st =
                    tern_error(TERN_ERR_TRUNCATED,
                               "host description: %zu bytes are not enough for every address", len);
                break;
            }
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", text);
        }
    }
    freeifaddrs(list);
    if (st == TERN_OK && used == 0)
        st = tern_error(TERN_ERR_NO_DEVICE, "host description: no interface address is up");
    return st;
}
