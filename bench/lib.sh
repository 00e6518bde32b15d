# shellcheck shell=bash
# Shared by the bench scripts that run on their own (fanout.sh,
# mirror.sh, chain_wan.sh): source it once LC_SRC_DIR is the repository.

# lc_bench_find VAR PATH: unless VAR is set already, set it to the first
# executable of build-bench/PATH and b/PATH (the bench build, then the
# developers' build); VAR stays as it was if neither is.
lc_bench_find() {
	local l
	for l in "$LC_SRC_DIR/build-bench/$2" "$LC_SRC_DIR/b/$2"; do
		if [[ -z ${!1-} && -x $l ]]; then
			printf -v "$1" '%s' "$l"
		fi
	done
}

# lc_bench_lanecp: LANECP, the lanecp to measure (as set, else found by
# lc_bench_find), exported; the script stops if there is none.
lc_bench_lanecp() {
	lc_bench_find LANECP cmd/lanecp
	: "${LANECP:?build lanecp first (or set LANECP)}"
	export LANECP
}
