#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The demo's short form of `papi_avail -a` (read on stdin): the hardware lines from the vendor string to the
# counter count, then the available presets under their column header (Name, Code, Deriv, Description), at most
# MAX (default 30) of them, and papi_avail's own closing count. "-a" lists only available presets, so every row
# is one this machine counts; the Deriv column says whether PAPI combines several native events for it.
#   papi_avail -a | scripts/papi-avail-brief.sh [MAX]
set -euo pipefail
max=${1:-30}
case $max in '' | *[!0-9]*) echo "papi-avail-brief.sh: MAX must be a number, not '$max'" >&2; exit 2 ;; esac
awk -v max="$max" '
	/^Vendor string/ { hw = 1 }
	hw { print }
	/^Number Hardware Counters/ { hw = 0 }
	/^ *Name +Code +Deriv/ { print ""; print "Available presets (papi_avail -a: every row is counted on this machine;"
		print "Deriv Yes = PAPI combines several native events for it):"; print; header = 1 }
	/^PAPI_/ { rows++; if (rows <= max) print; next }
	/^Of [0-9]+ available events/ {
		if (rows > max) printf "... (%d more)\n", rows - max
		print; summary = 1 }
	END { if (!header || !summary) { print "papi-avail-brief.sh: not the output of papi_avail -a" > "/dev/stderr"; exit 1 } }
'
