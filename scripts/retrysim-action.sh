#!/usr/bin/env bash
# The script of action.yml: 'retrysim check --baseline' (whose exit status
# is this script's: 0 holds, 1 worse, 2 bad input), then 'retrysim diff' of
# the baseline and a new run, as markdown: appended to the job summary,
# named in the step's outputs, and posted on the pull request with gh.
# Reads the action's inputs from INPUT_* and the runner's GITHUB_*
# variables; scripts/action-test.sh runs it against a fake runner.
set -uo pipefail
retrysim=${RETRYSIM:-retrysim}
baseline=${INPUT_BASELINE:?the baseline input is required}
out=${RUNNER_TEMP:-$(mktemp -d)}/retrysim-action
mkdir -p "$out"
where=()
[ -n "${INPUT_FILE:-}" ] && where+=(--file "$INPUT_FILE")
[ -n "${INPUT_SCENARIO:-}" ] && where+=(--scenario "$INPUT_SCENARIO")
tolerance=()
[ -n "${INPUT_TOLERANCE:-}" ] && tolerance=(--tolerance "$INPUT_TOLERANCE")
seeds=()
[ -n "${INPUT_SEEDS:-}" ] && seeds=(--seeds "$INPUT_SEEDS")

md=$out/retrysim.md
{
  echo "## retrysim: retry policies against \`$baseline\`"
  echo
} > "$md"
"$retrysim" check "${where[@]}" --baseline "$baseline" "${tolerance[@]}" --format markdown >> "$md"
status=$?
if [ "$status" -le 1 ]; then # a diff needs input check could read
  if "$retrysim" compare "${where[@]}" "${seeds[@]}" --format json > "$out/new.json" &&
    { echo; echo "### What moved (retrysim diff)"; echo; "$retrysim" diff "$baseline" "$out/new.json" --format markdown; } >> "$md.diff"; then
    cat "$md.diff" >> "$md"
  else
    echo "retrysim-action: the diff failed (above); the check's result stands" >&2
  fi
  rm -f "$md.diff"
fi
[ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$md" >> "$GITHUB_STEP_SUMMARY"
[ -n "${GITHUB_OUTPUT:-}" ] && echo "markdown=$md" >> "$GITHUB_OUTPUT"
if [ "${INPUT_COMMENT:-true}" = true ] && [ "${GITHUB_EVENT_NAME:-}" = pull_request ]; then
  pr=$(jq -r '.pull_request.number // empty' "${GITHUB_EVENT_PATH:?}")
  if [ -z "$pr" ]; then
    echo "retrysim-action: no pull-request number in $GITHUB_EVENT_PATH; no comment" >&2
  elif ! gh pr comment "$pr" --repo "${GITHUB_REPOSITORY:?}" --body-file "$md"; then
    echo "retrysim-action: gh pr comment failed (does the job have permissions pull-requests: write?)" >&2
  fi
fi
exit "$status"
