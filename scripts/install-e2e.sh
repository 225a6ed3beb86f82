#!/usr/bin/env bash
# The README's install line on a machine with no clone: builds a module
# proxy (the GOPROXY protocol's files: @v/list, .info, .mod, .zip) from
# this clone's HEAD, then, with no network (GOPROXY=file://, the
# dependencies from the module cache's own download folder, which has the
# same layout), 'go install github.com/retrysim/retrysim/cmd/retrysim@VERSION'
# into an empty folder, and runs the installed binary outside any checkout:
# its version, a scenario, and the playground, whose engine it compiles
# from the module cache.
set -euo pipefail
cd "$(dirname "$0")/.."
module=github.com/retrysim/retrysim
tmp=$(mktemp -d)

# A pseudo-version of HEAD, as the go command would name the commit.
stamp=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd HEAD)
version=v0.0.0-$stamp-$(git rev-parse --short=12 HEAD)
at=$tmp/proxy/$module/@v
mkdir -p "$at"
echo "$version" > "$at/list"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)" > "$at/$version.info"
git show HEAD:go.mod > "$at/$version.mod"
# The module zip: every file under MODULE@VERSION/ (git archive of the
# committed tree; the go command checks the layout when it extracts it).
git archive --format=zip --prefix="$module@$version/" -o "$at/$version.zip" HEAD

# The module cache stays the machine's, so the dependencies' compiled
# packages are reused; retrysim's entries of this version are removed at
# the end.
modcache=$(go env GOMODCACHE)
cleanup() {
  chmod -R u+w "$tmp" "$modcache/$module@$version" 2>/dev/null || true
  rm -rf "$tmp" "$modcache/$module@$version" "$modcache/cache/download/$module/@v/$version".*
}
trap cleanup EXIT
export GOPROXY="file://$tmp/proxy,file://$modcache/cache/download"
# No network: the dependencies are checked against go.sum, not sum.golang.org.
export GOBIN=$tmp/bin GONOSUMDB=$module GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" # no go.mod here or above
go install "$module/cmd/retrysim@$version"
"$GOBIN/retrysim" --version | tee "$tmp/version.txt"
grep -q "$version" "$tmp/version.txt" || { echo "FAIL: the installed binary does not report $version"; exit 1; }
"$GOBIN/retrysim" compare --scenario overload-burst >/dev/null
"$GOBIN/retrysim" playground --out site
test -s site/retrysim.wasm || { echo "FAIL: the installed binary wrote no engine"; exit 1; }
echo "installed $module/cmd/retrysim@$version from a module proxy of this clone; its playground compiled the engine from the module cache"
