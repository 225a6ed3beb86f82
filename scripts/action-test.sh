#!/usr/bin/env bash
# Runs the action's script (scripts/retrysim-action.sh) against a fake
# GitHub runner: GITHUB_* files in a temporary folder and a gh that
# records what it would post. Checks the markdown and the exit status of
# a change that holds (0), one that makes a policy worse (1) and a
# baseline that is no report (2).
#   bash scripts/action-test.sh [RETRYSIM_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  bin=$tmp/retrysim
  go build -o "$bin" ./cmd/retrysim
fi
mkdir -p "$tmp/path"
cat > "$tmp/path/gh" <<'GH'
#!/usr/bin/env bash
# A fake gh: records its arguments and the body it was given.
echo "gh $*" >> "$FAKE_GH_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cat "$2" >> "$FAKE_GH_LOG"; fi
  shift
done
GH
chmod +x "$tmp/path/gh"
"$bin" show overload-burst > "$tmp/scenario.yaml"
"$bin" compare --file "$tmp/scenario.yaml" --scenario overload-burst --format json > "$tmp/baseline.json"
echo '{"pull_request": {"number": 42}}' > "$tmp/event.json"

fail() { echo "FAIL: action script: $*"; exit 1; }
# run CASE: the action's script with a fresh fake runner; sets status.
run() {
  local dir=$tmp/$1
  mkdir -p "$dir"
  : > "$dir/summary.md"; : > "$dir/output"; : > "$dir/gh.log"
  set +e
  env PATH="$tmp/path:$PATH" RETRYSIM="$bin" RUNNER_TEMP="$dir" FAKE_GH_LOG="$dir/gh.log" \
    GITHUB_STEP_SUMMARY="$dir/summary.md" GITHUB_OUTPUT="$dir/output" GITHUB_EVENT_NAME=pull_request \
    GITHUB_EVENT_PATH="$tmp/event.json" GITHUB_REPOSITORY=example/repo \
    INPUT_BASELINE="$2" INPUT_FILE="$3" INPUT_SCENARIO=overload-burst INPUT_COMMENT=true \
    bash scripts/retrysim-action.sh > "$dir/stdout" 2> "$dir/stderr"
  status=$?
  set -e
}

# The same policies: the check holds, the markdown says so and is posted.
run same "$tmp/baseline.json" "$tmp/scenario.yaml"
[ "$status" = 0 ] || { cat "$tmp/same/stderr"; fail "an unchanged scenario exits $status, want 0"; }
grep -q 'PASS' "$tmp/same/summary.md" || fail "no PASS in the job summary of an unchanged scenario"
grep -q '^gh pr comment 42 --repo example/repo --body-file ' "$tmp/same/gh.log" || fail "no comment posted on pull request 42: $(cat "$tmp/same/gh.log")"
grep -q "^markdown=$tmp/same/retrysim-action/retrysim.md\$" "$tmp/same/output" || fail "the markdown output is not named in GITHUB_OUTPUT"

# capped-exponential with 3 attempts instead of 8: completes fewer; the
# check fails (exit 1) and the diff says what moved.
sed 's/^      - name: capped-exponential$/&\n        max_attempts: 3/' "$tmp/scenario.yaml" > "$tmp/worse.yaml"
cmp -s "$tmp/scenario.yaml" "$tmp/worse.yaml" && fail "the test's edit of capped-exponential did not apply"
run worse "$tmp/baseline.json" "$tmp/worse.yaml"
[ "$status" = 1 ] || { cat "$tmp/worse/stderr"; fail "a worse policy exits $status, want 1"; }
grep -q 'FAIL' "$tmp/worse/summary.md" || fail "no FAIL in the job summary of a worse policy"
grep -q 'What moved' "$tmp/worse/summary.md" || fail "no diff in the job summary of a worse policy"
grep -q 'capped-exponential' "$tmp/worse/gh.log" || fail "the comment does not name the worse policy"

# A baseline that is no report: bad input, exit 2, still a summary.
echo 'not json' > "$tmp/bad.json"
run bad "$tmp/bad.json" "$tmp/scenario.yaml"
[ "$status" = 2 ] || fail "a baseline that is no report exits $status, want 2"

# actionlint over action.yml and the example workflow that uses it, laid
# out as a repository (actionlint reads a local action's metadata there).
lint=$tmp/lint
mkdir -p "$lint/.github/workflows"
git -C "$lint" init -q
cp action.yml "$lint/"
cp scripts/action-workflow.yml "$lint/.github/workflows/"
if ! GOBIN=$tmp GOFLAGS= go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 2>"$tmp/actionlint.err"; then
  tail -3 "$tmp/actionlint.err"
  echo "SKIP actionlint: github.com/rhysd/actionlint@v1.7.12 cannot be installed here (above)"
else
  (cd "$lint" && "$tmp/actionlint") || fail "actionlint (above)"
  echo "actionlint v1.7.12: action.yml and scripts/action-workflow.yml are clean"
fi
echo "action script: exit 0 holds, 1 worse (with the diff), 2 bad input; summary, output and comment written"
