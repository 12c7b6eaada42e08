# mpi/pmpi.awk — the profiling interface's names, from include/mpi.h,
# include/mpi_rma.h and include/mpi_t.h (given all three, in that order;
# H below).
#
#   awk -v mode=header -f mpi/pmpi.awk H   the PMPI_ prototypes
#   awk -v mode=defsym -f mpi/pmpi.awk H   --defsym=PMPI_x=MPI_x
#   awk -v mode=names  -f mpi/pmpi.awk H   the MPI_ function names
#
# Every function prototype of the header (a line starting "int MPI_" or
# "double MPI_" or "MPI_Aint MPI_", up to its ";") gets a PMPI_ twin with the same parameters.
# The library defines the MPI_ functions and the linker makes each PMPI_
# name the same address (mpi/Makefile.inc), so a tool that defines MPI_Send
# and calls PMPI_Send reaches tern's.  Prototypes inside the generated
# block itself are skipped.
/^\/\* ---- PMPI_/ { inblock = 1 }
/^\/\* ---- end of PMPI_/ { inblock = 0; next }
inblock { next }
!proto && /^(int|double|MPI_Aint) MPI_[A-Za-z0-9_]+\(/ { proto = 1; text = "" }
proto {
    text = text (text == "" ? "" : "\n") $0
    if ($0 ~ /;[ \t]*(\/\*.*)?$/) {
        proto = 0
        name = text
        sub(/^(int|double|MPI_Aint) /, "", name)
        sub(/\(.*/, "", name)
        gsub(/\n/, "\n", text)
        if (mode == "names")
            print name
        else if (mode == "defsym")
            print "--defsym=P" name "=" name
        else {
            out = text
            sub(/ MPI_/, " PMPI_", out)     # the function's own name only
            gsub(/\n  /, "\n   ", out)      # continuation lines: one more space
            sub(/[ \t]*\/\*.*$/, "", out)   # no trailing comment
            print out
        }
    }
}
