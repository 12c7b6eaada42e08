/*
 * dpdk netmod: what a virtual device's arguments mean for the frames it
 * takes, where ethdev's max_rx_pktlen does not say it.
 *
 * memif chains a frame larger than its buffer (bsize, 2048 by default)
 * over several descriptors, and DPDK 22.11 merges or truncates such frames
 * when its ring fills (seen here): a frame must fit one buffer.  Unless the
 * template sets bsize, it is sized for TERN_DPDK_MTU (both ends have the
 * same settings).  The default MTU stays 1500.
 *
 * af_packet reports max_rx_pktlen 1518 whatever its rings, so ethdev
 * refuses any larger MTU; yet the frames it moves are bounded only by its
 * ring frames (framesz, 2048 by default: a received frame starts 66 bytes
 * in, a sent one 32) and by the kernel interface's MTU (a larger frame is
 * dropped by the kernel's send).  The port is configured at 1500 and
 * tern's frames take what the interface allows: TERN_DPDK_MTU, or by
 * default the interface's MTU, with ring frames added to the arguments to
 * hold it unless the template sets framesz or blocksz.
 *
 * Every port on a kernel interface (ethdev's if_index: af_packet, af_xdp,
 * tap) takes that interface's MTU by default (dpdk_port.c's configure;
 * jumbo frames where the veth or NIC has them; at most 9600,
 * TERN_DPDK_MTU's bound), within frame_cap or what ethdev says the device
 * takes.  A VC uses the smaller of its two ends' MTUs (their cards), so
 * both ends must allow a jumbo frame.
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_kvargs.h>

#include "netmods/dpdk/dpdk_internal.h"

/* af_packet (TPACKET_V2): where a frame starts in a ring frame */
#define AFP_RX_OFF 66u /* TPACKET_ALIGN(TPACKET2_HDRLEN) + 2: the MAC header */
#define AFP_TX_OFF 32u /* TPACKET2_HDRLEN - sizeof(struct sockaddr_ll) */
#define AFP_FRAMESZ 2048u
/* the largest MTU taken from an interface (TERN_DPDK_MTU's bound): a
 * 64 KiB loopback or veth MTU would overflow a pool's 16-bit room */
#define KERNEL_MTU_MAX 9600u

/* Append arg to args (cap bytes); false, args unchanged, when it does not fit. */
static bool append(char *args, size_t cap, const char *arg)
{
    size_t al = strlen(args), need = (al ? 1 : 0) + strlen(arg);
    if (al + need >= cap)
        return false;
    snprintf(args + al, cap - al, "%s%s", al ? "," : "", arg);
    return true;
}

static tern_status_t too_long(const tern_dpdk_port_t *p, const char *arg)
{
    return tern_error(TERN_ERR_INVALID_PARAM, "dpdk %s: no room to add %s to the device's "
                      "arguments (shorten TERN_DPDK_VDEV)", p->name, arg);
}

/* The kernel MTU of interface name (0: unknown). */
static unsigned kernel_mtu(const char *name)
{
    if (name == NULL)
        return 0;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    if (strlen(name) >= sizeof(ifr.ifr_name))
        return 0;
    memcpy(ifr.ifr_name, name, strlen(name));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int rc = ioctl(fd, SIOCGIFMTU, &ifr);
    close(fd);
    if (rc != 0 || ifr.ifr_mtu <= 0)
        return 0;
    return (unsigned)ifr.ifr_mtu < KERNEL_MTU_MAX ? (unsigned)ifr.ifr_mtu : KERNEL_MTU_MAX;
}

unsigned tern_dpdk_kernel_mtu(unsigned if_index)
{
    char name[IF_NAMESIZE];
    return if_index != 0 ? kernel_mtu(if_indextoname(if_index, name)) : 0;
}

static tern_status_t af_packet(tern_dpdk_t *d, tern_dpdk_port_t *p,
                               const struct rte_kvargs *kv, char *args, size_t cap)
{
    const char *iface = rte_kvargs_get(kv, "iface"), *fs = rte_kvargs_get(kv, "framesz");
    if (iface == NULL)
        return TERN_OK; /* the PMD refuses it, naming why */
    unsigned kmtu = kernel_mtu(iface); /* at most KERNEL_MTU_MAX */
    if (kmtu == 0)
        return tern_error(TERN_ERR_UNSUPPORTED, "dpdk %s: no interface %s here (its MTU "
                          "could not be read)", p->name, iface);
    unsigned want = d->cfg->mtu ? (unsigned)d->cfg->mtu : kmtu;
    if (want > kmtu)
        want = kmtu; /* the kernel drops larger frames */
    unsigned framesz = fs != NULL ? (unsigned)strtoul(fs, NULL, 0) : AFP_FRAMESZ;
    if (fs == NULL && rte_kvargs_get(kv, "blocksz") == NULL &&
        want + RTE_ETHER_HDR_LEN + AFP_RX_OFF > AFP_FRAMESZ) {
        /* frames of a multiple of 1 KiB, at least four per block: a block
         * is whole pages and holds its frames without a gap (the PMD finds
         * frame i at i x framesz), and its frame count (a power of two)
         * divides the PMD's 512 frames */
        framesz = (want + RTE_ETHER_HDR_LEN + AFP_RX_OFF + 1023u) & ~1023u;
        unsigned per = 4, page = (unsigned)getpagesize();
        while ((per * framesz) % page != 0)
            per *= 2;
        char v[48];
        snprintf(v, sizeof(v), "framesz=%u,blocksz=%u", framesz, per * framesz);
        if (!append(args, cap, v))
            return too_long(p, v);
    }
    if (framesz < AFP_RX_OFF + RTE_ETHER_MIN_LEN)
        return tern_error(TERN_ERR_INVALID_PARAM, "dpdk %s: framesz=%u is too small", p->name,
                          framesz);
    /* configure() takes the interface's MTU (if_index) up to this */
    p->frame_cap = framesz - AFP_RX_OFF;
    if (p->frame_cap > kmtu + RTE_ETHER_HDR_LEN)
        p->frame_cap = kmtu + RTE_ETHER_HDR_LEN;
    p->rx_room = framesz - AFP_TX_OFF; /* what its receive queue asks of an mbuf */
    return TERN_OK;
}

static tern_status_t memif(tern_dpdk_t *d, tern_dpdk_port_t *p, const struct rte_kvargs *kv,
                           char *args, size_t cap)
{
    const char *b = rte_kvargs_get(kv, "bsize");
    p->frame_cap = b != NULL ? (uint32_t)strtoul(b, NULL, 0) : 2048;
    uint32_t want = d->cfg->mtu ? (uint32_t)d->cfg->mtu + RTE_ETHER_HDR_LEN : 0;
    if (b == NULL && want > p->frame_cap) {
        p->frame_cap = (want + 127) & ~127u;
        char v[32];
        snprintf(v, sizeof(v), "bsize=%u", p->frame_cap);
        if (!append(args, cap, v))
            return too_long(p, v);
    }
    return TERN_OK;
}

tern_status_t tern_dpdk_devargs_frames(tern_dpdk_t *d, tern_dpdk_port_t *p, char *args,
                                       size_t cap)
{
    bool afp = strncmp(p->name, "net_af_packet", 13) == 0;
    if (!afp && strncmp(p->name, "net_memif", 9) != 0)
        return TERN_OK;
    struct rte_kvargs *kv = rte_kvargs_parse(args, NULL);
    if (kv == NULL)
        return TERN_OK; /* malformed: the PMD refuses them, naming why */
    tern_status_t st = afp ? af_packet(d, p, kv, args, cap) : memif(d, p, kv, args, cap);
    rte_kvargs_free(kv);
    return st;
}
