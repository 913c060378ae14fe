# SPDX-License-Identifier: MIT
# Sourced by build-libpfm4.sh and build-papi.sh: an upstream tree with our overlay applied, copied afresh from
# the pristine source whenever the hash of its inputs (our overlay files, the generated headers, the build
# script) changes. The hash becomes the tree's stamp only once the build has succeeded
# (overlay_tree_built), so a tree whose build failed is copied afresh on the next run.

# overlay_tree_prepare LABEL PRISTINE TREE INPUTS-HASH APPLY-COMMAND [ARGS...]
overlay_tree_prepare() {
	local label=$1 pristine=$2 tree=$3 want=$4
	shift 4
	if [ -f "$tree/.rvpapi-inputs" ] && [ "$(cat "$tree/.rvpapi-inputs")" = "$want" ]; then
		return 0
	fi
	echo "$label: fresh copy of $(basename "$pristine") with our overlay in $tree"
	rm -rf "$tree"
	cp -a "$pristine" "$tree"
	"$@" || return 1
	echo "$want" >"$tree/.rvpapi-inputs.pending"
}

# overlay_tree_built TREE: the build in TREE succeeded; its inputs hash becomes the stamp.
overlay_tree_built() {
	if [ -f "$1/.rvpapi-inputs.pending" ]; then
		mv "$1/.rvpapi-inputs.pending" "$1/.rvpapi-inputs"
	fi
}
