#!/usr/bin/env bash
# What the container image installs, in one place: the Dockerfile runs this script, and so does
# test/packaging/image-install.test.ts (against the real LXD daemon), so the two cannot drift.
#
# Usage: scripts/image-install.sh SRC DEST
#   SRC   a copy of the repository (the Docker build context); compiled in place
#   DEST  the installation made from it: package.json, package-lock.json, bin/, dist/, the bundled
#         rules/ and the production dependencies only (no compiler of the build, no test tools)
#
# npm settings come from the environment as usual (e.g. npm_config_prefer_offline=true).
set -euo pipefail

die() { echo "image-install: $*" >&2; exit 1; }
(($# == 2)) || die "usage: $0 SRC DEST"
src=$(cd "$1" && pwd) || die "no such directory: $1"
dest=$2
[[ -f $src/package-lock.json ]] || die "$src has no package-lock.json"

cd "$src"
# Dependencies' install scripts are not needed to compile and are not run; the build is explicit.
npm ci --ignore-scripts --no-audit --no-fund
# The one install step that is the project's own: its patches to dependencies (patches/, see
# patches/README.md), which the postinstall would apply.
npx --no-install patch-package
npm run build
[[ -f dist/cli/entry.js ]] || die "npm run build made no dist/cli/entry.js"

mkdir -p "$dest"
cp -R package.json package-lock.json bin dist rules patches "$dest"/
rm -f "$dest/dist/.tsbuildinfo" "$dest/dist/.build-stamp.json"
cd "$dest"
npm ci --omit=dev --ignore-scripts --no-audit --no-fund
npx --no-install patch-package
