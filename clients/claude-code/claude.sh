#!/bin/sh
# The harness of the real Claude Code CLI (npm @anthropic-ai/claude-code,
# pinned in package.json) for 'retrysim validate --exec "sh
# clients/claude-code/claude.sh [CLAUDE FLAGS]"': one headless 'claude -p'
# per caller, all at once, each naming itself in RETRYSIM_CLIENT_HEADER
# (ANTHROPIC_CUSTOM_HEADERS) and with a home of its own. The CLI's own
# settings come from the environment (CLAUDE_CODE_MAX_RETRIES) and the
# flags (--fallback-model). A failed call is the CLI's exit 1: the server
# counts what happened, so the harness exits 0.
set -eu
: "${RETRYSIM_CLIENTS:?RETRYSIM_CLIENTS and RETRYSIM_CLIENT_HEADER must be set (retrysim validate --exec sets them)}"
: "${RETRYSIM_CLIENT_HEADER:?RETRYSIM_CLIENTS and RETRYSIM_CLIENT_HEADER must be set (retrysim validate --exec sets them)}"
dir=$(cd "$(dirname "$0")" && pwd)
claude=$dir/node_modules/.bin/claude
homes=$(mktemp -d)
trap 'rm -rf "$homes"' EXIT
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
i=0
while [ "$i" -lt "$RETRYSIM_CLIENTS" ]; do
  mkdir "$homes/c$i"
  HOME=$homes/c$i ANTHROPIC_CUSTOM_HEADERS="$RETRYSIM_CLIENT_HEADER: c$i" \
    "$claude" -p hi --output-format json "$@" >"$homes/c$i/out.json" 2>&1 &
  i=$((i + 1))
done
wait
failed=$(grep -l '"is_error":true' "$homes"/c*/out.json 2>/dev/null | wc -l)
echo "claude-code: $RETRYSIM_CLIENTS callers, $((RETRYSIM_CLIENTS - failed)) completed, $failed failed"
