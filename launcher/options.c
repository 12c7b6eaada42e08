/*
 * ternrun command line: ternrun [options] -n N program [args...]
 *
 * Options end at the first word that does not start with '-' (or after "--"):
 * everything from there on is the program and its own arguments, which are
 * never interpreted by ternrun.
 */
#include "launcher/job.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define USAGE_ERROR 2

static void print_help(FILE *f)
{
    fprintf(f,
            "usage: ternrun [options] -n N program [args...]\n"
            "\n"
            "Start N copies of program on this node as one job, serve them\n"
            "PMIx wire-up, and return the worst exit status of the ranks.\n"
            "\n"
            "options:\n"
            "  -n, -np N            number of ranks (required, >= 1)\n"
            "  --bind-to core|none  bind rank r to core r %% ncores (default: core\n"
            "                       when N <= cores, else none)\n"
            "  -x VAR[=value]       export VAR to the ranks (PMIX_* variables are\n"
            "                       otherwise scrubbed; the rest is inherited)\n"
            "  --kill-grace SECS    after a rank fails, let the others run this long\n"
            "                       before SIGTERM (default 3, env TERN_KILL_GRACE);\n"
            "                       also SIGTERM->SIGKILL delay after a forwarded signal\n"
            "  --tmpdir DIR         where to put the PMIx rendezvous directory\n"
            "                       (default $TMPDIR, then /tmp)\n"
            "  --stdin rank0|all|none|N\n"
            "                       which rank(s) read ternrun's stdin (default rank0;\n"
            "                       all: every rank gets the same bytes); the others\n"
            "                       read /dev/null\n"
            "  --stdin-tool         keep the ranks' stdin open for a tool instead of\n"
            "                       reading ternrun's: the first 'tern-iof --stdin'\n"
            "                       that attaches feeds it, its input's end is the\n"
            "                       ranks' EOF\n"
            "  --tag-output         prefix each output line with [rank,stdout|stderr]\n"
            "  --timestamp-output   prefix each output line with its arrival time\n"
            "  --merge-stderr-to-stdout\n"
            "                       forward the ranks' stderr to ternrun's stdout\n"
            "  --output-filename DIR\n"
            "                       write rank r's output to DIR/r/stdout and\n"
            "                       DIR/r/stderr (untagged) instead of ternrun's\n"
            "                       (and tern's diagnostics to DIR/r/diag)\n"
            "  --iof-raw            forward output as it comes, not as whole lines\n"
            "                       (progress bars; lines of ranks may mix)\n"
            "  --iof-announce FILE  write the path of the socket tern-iof attaches\n"
            "                       to into FILE (also in the ranks' TERNRUN_IOF_SOCKET)\n"
            "  --mpich-abi          run programs linked by MPICH's mpicc (libmpich.so.12)\n"
            "                       on tern's MPI layer: tern's libmpich.so.12 first on\n"
            "                       the ranks' LD_LIBRARY_PATH (its directory: env\n"
            "                       TERN_MPICH_ABI_DIR, else the build tree's or the\n"
            "                       installed one)\n"
            "  -v, --verbose        say what ternrun does (binding, tmpdir, ...)\n"
            "  --version            print the version and exit\n"
            "  -h, --help           print this help and exit\n");
}

/* Parse seconds (integer or decimal, >= 0) into milliseconds. */
static int parse_seconds(const char *s, long *ms)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 86400) {
        return -1;
    }
    *ms = (long)(v * 1000.0 + 0.5);
    return 0;
}

static int parse_nranks(const char *s, int *n)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        ternrun_err("-n expects a number of ranks, got '%s'", s);
        return -1;
    }
    if (v < 1) {
        ternrun_err("-n must be at least 1, got %ld", v);
        return -1;
    }
    if (v > TERNRUN_MAX_RANKS) {
        ternrun_err("-n %ld is more than this launcher supports (%d)", v, TERNRUN_MAX_RANKS);
        return -1;
    }
    *n = (int)v;
    return 0;
}

static int parse_stdin(const char *s, struct ternrun_options *opt)
{
    char *end;
    long v;

    if (strcmp(s, "rank0") == 0) {
        opt->stdin_mode = TERNRUN_STDIN_RANK;
        opt->stdin_rank = 0;
        return 0;
    }
    if (strcmp(s, "all") == 0) {
        opt->stdin_mode = TERNRUN_STDIN_ALL;
        return 0;
    }
    if (strcmp(s, "none") == 0) {
        opt->stdin_mode = TERNRUN_STDIN_NONE;
        return 0;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v >= TERNRUN_MAX_RANKS) {
        ternrun_err("--stdin expects rank0, all, none or a rank number, got '%s'", s);
        return -1;
    }
    opt->stdin_mode = TERNRUN_STDIN_RANK;
    opt->stdin_rank = (int)v;
    return 0;
}

static bool valid_env_name(const char *s, size_t len)
{
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return false;
    }
    for (size_t i = 1; i < len; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) {
            return false;
        }
    }
    return true;
}

static int add_export(struct ternrun_options *opt, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    struct ternrun_export *tmp, *e;

    if (!valid_env_name(arg, len)) {
        ternrun_err("-x expects VAR or VAR=value with a valid variable name, got '%s'", arg);
        return -1;
    }
    tmp = realloc(opt->exports, (opt->nexports + 1) * sizeof(*tmp));
    if (tmp == NULL) {
        goto err_nomem;
    }
    opt->exports = tmp;
    e = &opt->exports[opt->nexports];
    e->name = strndup(arg, len);
    if (e->name == NULL) {
        goto err_nomem;
    }
    if (eq != NULL) {
        e->value = strdup(eq + 1);
    } else {
        const char *v = getenv(e->name);
        e->value = v ? strdup(v) : NULL;
        if (v == NULL) {
            ternrun_vlog(1, "-x %s: not set in the environment, not exported", e->name);
        }
    }
    if ((eq != NULL || getenv(e->name) != NULL) && e->value == NULL) {
        free(e->name);
        goto err_nomem;
    }
    opt->nexports++;
    return 0;

err_nomem:
    ternrun_err("out of memory parsing -x %s", arg);
    return -1;
}

/* "--name=value" or "--name value": returns the value or NULL (error printed) */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *arg = argv[*i];
    size_t nlen = strlen(name);

    if (strncmp(arg, name, nlen) == 0 && arg[nlen] == '=') {
        return arg + nlen + 1;
    }
    if (*i + 1 >= argc) {
        ternrun_err("option %s needs a value", name);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

static bool opt_is(const char *arg, const char *name)
{
    size_t nlen = strlen(name);

    return strncmp(arg, name, nlen) == 0 && (arg[nlen] == '\0' || arg[nlen] == '=');
}

int ternrun_options_parse(int argc, char **argv, struct ternrun_options *opt)
{
    const char *env_grace = getenv("TERN_KILL_GRACE");
    const char *v;
    int i;

    memset(opt, 0, sizeof(*opt));
    opt->kill_grace_ms = TERNRUN_DEFAULT_KILL_GRACE_MS;
    if (env_grace != NULL && *env_grace != '\0' &&
        parse_seconds(env_grace, &opt->kill_grace_ms) != 0) {
        ternrun_err("TERN_KILL_GRACE must be a number of seconds >= 0, got '%s'", env_grace);
        return USAGE_ERROR;
    }

    /* -v first, so that messages printed while parsing honour it */
    for (i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            ternrun_verbose++;
        }
    }

    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];

        if (arg[0] != '-') {
            break;
        }
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return -1;
        } else if (strcmp(arg, "--version") == 0) {
            printf("ternrun (tern) %s\n", PACKAGE_VERSION);
            return -1;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            opt->verbose++;
        } else if (strcmp(arg, "-n") == 0 || opt_is(arg, "-np") || opt_is(arg, "--np")) {
            const char *name = strcmp(arg, "-n") == 0 ? "-n" : arg[1] == '-' ? "--np" : "-np";

            if ((v = opt_value(argc, argv, &i, name)) == NULL || parse_nranks(v, &opt->nranks)) {
                return USAGE_ERROR;
            }
        } else if (strncmp(arg, "-n", 2) == 0 && isdigit((unsigned char)arg[2])) {
            if (parse_nranks(arg + 2, &opt->nranks)) {
                return USAGE_ERROR;
            }
        } else if (opt_is(arg, "--bind-to")) {
            if ((v = opt_value(argc, argv, &i, "--bind-to")) == NULL) {
                return USAGE_ERROR;
            }
            if (strcmp(v, "core") == 0) {
                opt->bind = TERNRUN_BIND_CORE;
            } else if (strcmp(v, "none") == 0) {
                opt->bind = TERNRUN_BIND_NONE;
            } else {
                ternrun_err("--bind-to expects 'core' or 'none', got '%s'", v);
                return USAGE_ERROR;
            }
        } else if (strcmp(arg, "-x") == 0) {
            if ((v = opt_value(argc, argv, &i, "-x")) == NULL || add_export(opt, v)) {
                return USAGE_ERROR;
            }
        } else if (opt_is(arg, "--kill-grace")) {
            if ((v = opt_value(argc, argv, &i, "--kill-grace")) == NULL) {
                return USAGE_ERROR;
            }
            if (parse_seconds(v, &opt->kill_grace_ms) != 0) {
                ternrun_err("--kill-grace expects a number of seconds >= 0, got '%s'", v);
                return USAGE_ERROR;
            }
        } else if (opt_is(arg, "--tmpdir")) {
            if ((v = opt_value(argc, argv, &i, "--tmpdir")) == NULL) {
                return USAGE_ERROR;
            }
            if (*v == '\0') {
                ternrun_err("--tmpdir expects a directory, got an empty string");
                return USAGE_ERROR;
            }
            opt->tmpdir = v;
        } else if (opt_is(arg, "--stdin")) {
            if ((v = opt_value(argc, argv, &i, "--stdin")) == NULL || parse_stdin(v, opt)) {
                return USAGE_ERROR;
            }
        } else if (strcmp(arg, "--stdin-tool") == 0) {
            opt->stdin_tool = true;
        } else if (strcmp(arg, "--mpich-abi") == 0) {
            if (opt->mpich_abi_dir == NULL && ternrun_mpich_abi_resolve(opt) != 0) {
                return USAGE_ERROR;
            }
        } else if (strcmp(arg, "--tag-output") == 0) {
            opt->tag_output = true;
        } else if (strcmp(arg, "--timestamp-output") == 0) {
            opt->timestamp_output = true;
        } else if (strcmp(arg, "--merge-stderr-to-stdout") == 0) {
            opt->merge_stderr = true;
        } else if (strcmp(arg, "--iof-raw") == 0) {
            opt->iof_raw = true;
        } else if (opt_is(arg, "--output-filename")) {
            if ((v = opt_value(argc, argv, &i, "--output-filename")) == NULL) {
                return USAGE_ERROR;
            }
            if (*v == '\0') {
                ternrun_err("--output-filename expects a directory, got an empty string");
                return USAGE_ERROR;
            }
            opt->output_dir = v;
        } else if (opt_is(arg, "--iof-announce")) {
            if ((v = opt_value(argc, argv, &i, "--iof-announce")) == NULL) {
                return USAGE_ERROR;
            }
            opt->iof_announce = v;
        } else {
            ternrun_err("unknown option '%s' (see ternrun --help)", arg);
            return USAGE_ERROR;
        }
    }

    if (opt->nranks == 0) {
        ternrun_err("missing -n N (number of ranks); usage: ternrun [options] -n N program [args...]");
        return USAGE_ERROR;
    }
    if (opt->stdin_mode == TERNRUN_STDIN_RANK && opt->stdin_rank >= opt->nranks) {
        ternrun_err("--stdin %d: there are only %d rank(s)", opt->stdin_rank, opt->nranks);
        return USAGE_ERROR;
    }
    if (opt->stdin_tool && opt->stdin_mode == TERNRUN_STDIN_NONE) {
        ternrun_err("--stdin-tool with --stdin none: no rank would read the tool's input");
        return USAGE_ERROR;
    }
    if (i >= argc) {
        ternrun_err("missing program to run; usage: ternrun [options] -n N program [args...]");
        return USAGE_ERROR;
    }
    opt->argv = &argv[i];
    return 0;
}

void ternrun_options_free(struct ternrun_options *opt)
{
    for (size_t i = 0; i < opt->nexports; i++) {
        free(opt->exports[i].name);
        free(opt->exports[i].value);
    }
    free(opt->exports);
    opt->exports = NULL;
    free(opt->mpich_abi_dir);
    opt->mpich_abi_dir = NULL;
    opt->nexports = 0;
}
