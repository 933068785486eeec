#!/usr/bin/env bash
# Regenerates docs/benchmarks.md's simulator tables: for each shared trace,
# `corral sim --compare easy,conservative,slurm,default` (every metric) and
# the --shake 10 spread of the headline metrics, written between the
# sim-tables markers. Run from anywhere after changing a policy; the traces
# are ../shared/traces from the repository root (TRACES=dir to override).
# It costs about 6 CPU-minutes, most of them Lublin's --shake 10.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-../shared/traces}
policies=${POLICIES:-easy,conservative,slurm,default}
doc=docs/benchmarks.md
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/corral" ./cmd/corral

# md turns corral's aligned table (cells two or more spaces apart) into a
# Markdown table, the first line its header.
md() {
  awk '{
    sub(/^ +/, ""); sub(/ +$/, ""); n = split($0, c, /  +/)
    row = "|"; for (i = 1; i <= n; i++) row = row " " c[i] " |"; print row
    if (NR == 1) { row = "|---|"; for (i = 2; i <= n; i++) row = row "---:|"; print row }
  }'
}

out=$(mktemp)
{
  echo "<!-- sim-tables:begin (scripts/sim-tables.sh writes this part; do not edit by hand) -->"
  echo
  echo "Generated $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) by \`scripts/sim-tables.sh\`."
  for t in KTH-SP2-filtered lublin-256; do
    f="$traces/$t.swf"
    echo
    echo "### $t.swf: \`--compare $policies\`"
    echo
    echo "    corral sim --trace $f --compare $policies"
    echo
    "$bin/corral" sim --trace "$f" --compare "$policies" > "$out"
    head -1 "$out"
    echo
    tail -n +2 "$out" | md
    echo
    echo "### $t.swf: \`--shake 10\` (mean ± standard deviation [min, max] over 10 jittered replays)"
    echo
    echo "    corral sim --trace $f --compare $policies --shake 10"
    echo
    "$bin/corral" sim --trace "$f" --compare "$policies" --shake 10 > "$out"
    head -1 "$out"
    echo
    tail -n +2 "$out" | md
  done
  echo
  echo "<!-- sim-tables:end -->"
} > "$out.section"
rm -f "$out"
grep -q '^<!-- sim-tables:begin' "$doc" || { echo "sim-tables.sh: $doc has no sim-tables markers" >&2; exit 1; }
awk -v section="$out.section" '
  /^<!-- sim-tables:begin/ { while ((getline l < section) > 0) print l; skip = 1; next }
  /^<!-- sim-tables:end/ { skip = 0; next }
  !skip { print }' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
rm -f "$out.section"
echo "sim-tables.sh: $doc updated"
