#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/bench-plot: from a run's tables (a fixture copied
# from scripts/bench's output) it writes every chart as PNG; from output
# with no table it writes none and succeeds; a cut TCP table still draws;
# the CPU table counted in instructions (scripts/vm --insns) draws too;
# bar labels too long to stand side by side break onto a second line.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
plot=$top/scripts/bench-plot
fix=$top/scripts/tests/fixtures/bench-tables.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tap.inc
. "$top/scripts/tests/tap.inc"

png() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ]; }

out=$("$plot" "$fix" "$tmp/a")
t "both tables: exit 0" '[ $? -eq 0 ]'
t "the TCP chart is a PNG" 'png "$tmp/a-tcp.png"'
t "the IPsec chart is a PNG" 'png "$tmp/a-ipsec.png"'
t "the per-second chart is a PNG" 'png "$tmp/a-seconds.png"'
t "the host CPU chart is a PNG" 'png "$tmp/a-cpu.png"'
t "the paths are printed" '[ "$out" = "$tmp/a-tcp.png"$'"'\n'"'"$tmp/a-seconds.png"$'"'\n'"'"$tmp/a-ipsec.png"$'"'\n'"'"$tmp/a-cpu.png" ]'
echo "vm: up in 5 s" >"$tmp/none.txt"
out=$("$plot" "$tmp/none.txt" "$tmp/b")
t "no table: exit 0, no chart" '[ $? -eq 0 ] && [ -z "$out" ] && ! ls "$tmp"/b-* 2>/dev/null'
sed -n '/^TCP, Mbit/,/^1 stream(s) from host/p' "$fix" >"$tmp/cut.txt"
"$plot" "$tmp/cut.txt" "$tmp/c" >/dev/null
t "a cut TCP table: its chart, no IPsec or CPU chart" 'png "$tmp/c-tcp.png" && [ ! -e "$tmp/c-ipsec.png" ] && [ ! -e "$tmp/c-cpu.png" ]'
grep -v "^per second, 1 stream to host, pass" "$fix" >"$tmp/one.txt"
"$plot" "$tmp/one.txt" "$tmp/d" >/dev/null
t "one mode's seconds only: no per-second chart" '[ ! -e "$tmp/d-seconds.png" ] && png "$tmp/d-tcp.png"'
printf '%s\n' "per second, 1 stream through the host, visit: 401 399 410" \
	"per second, 1 stream through the host, pass: 388 270 402" >"$tmp/crawl.txt"
out=$("$plot" "$tmp/crawl.txt" "$tmp/e")
t "the crawl table's seconds: the per-second chart alone" '[ "$out" = "$tmp/e-seconds.png" ] && png "$tmp/e-seconds.png"'
# shellcheck disable=SC2034 # read by t's eval
out=$("$plot" "$top/scripts/tests/fixtures/bench-cpu-insns.txt" "$tmp/f")
t "the CPU table in instructions (--insns): its chart alone" '[ "$out" = "$tmp/f-cpu.png" ] && png "$tmp/f-cpu.png"'
rows=$(python3 -c 'import importlib.machinery as m, sys
mod = m.SourceFileLoader("bp", sys.argv[1]).load_module()
rate, unit, cols, rows = mod.cpu_rows(open(sys.argv[2]).read().splitlines())
print(rate, unit, len(cols), len(rows), *(len(r[1]) for r in rows))' \
	"$plot" "$top/scripts/tests/fixtures/bench-cpu-insns.txt" 2>&1)
t "its rate, unit, 4 columns and 7 rows of 4 cells, not the idle line" \
	'[ "$rows" = "30 Minsn 4 7 4 4 4 4 4 4 4" ]' "got '$rows'"
labels=$(python3 -c 'import importlib.machinery as m, sys
mod = m.SourceFileLoader("bp", sys.argv[1]).load_module()
print("|".join(mod.two_lines(s) for s in sys.argv[2:]))' "$plot" \
	"veth plain" "flows 2, packet" "plain (no IPsec)" \
	"plain, CPU 1 spinning" "veth sw ESP" 2>&1)
t "long bar labels break in two, short ones stay whole" \
	'[ "$labels" = "veth plain|flows 2\\npacket|plain\\n(no IPsec)|plain\\nCPU 1 spinning|veth sw\\nESP" ]' \
	"got '$labels'"
tap_end
