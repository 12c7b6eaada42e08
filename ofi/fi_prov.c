/*
 * The provider's entry point: libfabric dlopens every *fi.so in
 * FI_PROVIDER_PATH (or its provider directory) and calls fi_prov_ini(),
 * which hands back the struct fi_provider below.  The settings are
 * declared here with fi_param_define, so `fi_info -e` lists them
 * (FI_TERN_NETMODS ...), and read with fi_param_get when a context is made.
 */
#include <stdlib.h>

#include "ofi/tern_fi.h"

static void tfi_cleanup(void)
{
    /* Nothing to do: the context lives as long as a domain is open, and
     * libfabric calls this from its destructor, too late for a
     * collective tern_finalize anyway. */
}

struct fi_provider tfi_prov = {
    .version = FI_VERSION(TERN_VERSION_MAJOR, TERN_VERSION_MINOR),
    .fi_version = TFI_API,
    .name = TFI_NAME,
    .getinfo = tfi_getinfo,
    .fabric = tfi_fabric,
    .cleanup = tfi_cleanup,
};

void tfi_settings(struct tfi_settings *s)
{
    s->netmods = NULL;
    s->wireup = NULL;
    s->num_workers = 0;
    s->inject_size = TFI_INJECT_SIZE_DEFAULT;
    /* fi_param_get leaves the value alone when the variable is unset */
    fi_param_get_str(&tfi_prov, "netmods", &s->netmods);
    fi_param_get_str(&tfi_prov, "wireup", &s->wireup);
    fi_param_get_int(&tfi_prov, "num_workers", &s->num_workers);
    size_t inj = s->inject_size;
    if (fi_param_get_size_t(&tfi_prov, "inject_size", &inj) == 0) {
        if (inj > TFI_INJECT_SIZE_MAX) {
            TFI_WARN(FI_LOG_CORE, "FI_TERN_INJECT_SIZE=%zu is above %u: using %u\n", inj,
                     TFI_INJECT_SIZE_MAX, TFI_INJECT_SIZE_MAX);
            inj = TFI_INJECT_SIZE_MAX;
        }
        s->inject_size = inj;
    }
    if (s->netmods != NULL && s->netmods[0] == '\0')
        s->netmods = NULL;
}

/* declared for -Wmissing-prototypes; FI_EXT_INI exports it */
struct fi_provider *fi_prov_ini(void);

FI_EXT_INI
{
    fi_param_define(&tfi_prov, "netmods", FI_PARAM_STRING,
                    "tern netmods the provider may use, a comma-separated list of shm, tcp, "
                    "verbs, dpdk (default: tern's own TERN_NETMODS, else every built one)");
    fi_param_define(&tfi_prov, "wireup", FI_PARAM_STRING,
                    "how the tern context is wired up: auto (PMIx inside a PMIx job, i.e. with "
                    "PMIX_RANK and PMIX_NAMESPACE set, else by addresses), pmix, address "
                    "(default: auto)");
    fi_param_define(&tfi_prov, "num_workers", FI_PARAM_INT,
                    "tern workers in the context, one per endpoint; the same on every process "
                    "of a job (default: tern's own TERN_NUM_WORKERS, else 1)");
    fi_param_define(&tfi_prov, "inject_size", FI_PARAM_SIZE_T,
                    "largest fi_inject / fi_tinject / FI_INJECT message in bytes (default: "
                    "4096, at most 1048576)");
    return &tfi_prov;
}
