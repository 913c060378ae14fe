#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The emulator's layer rule (scripts/check_layers.py): compile every emulator source (and any extra source
# given, as if it were part of the emulator) into a scratch folder and check the objects' symbols.
# Usage: scripts/check-layers.sh [extra.c ...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$top/gen/gen_events.py" --emulator "$tmp" >/dev/null
python3 "$top/gen/gen_exec_tables.py" "$top/events" "$tmp/rvexec_event_map.h" --event-map
for f in "$top"/emulator/*.c "$tmp/rvemu_tables.c" "$@"; do
	gcc -std=c11 -D_GNU_SOURCE -pthread -c -I"$top/lib" -I"$top/emulator" -I"$top/plugin" -I"$tmp" -o "$tmp/$(basename "${f%.c}").o" "$f"
done
python3 "$top/scripts/check_layers.py" "$tmp"/*.o
