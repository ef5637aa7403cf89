#!/usr/bin/env bash
# Builds dist/holodesk-<version>-macos-<arch>.dmg (UNTESTED: see packaging/README.md).
# Run from the repository root on macOS with Python 3.11+ (python.org or Homebrew):
#   bash packaging/macos/build.sh
# Signing and notarization run only when these are set (otherwise the .dmg is unsigned and
# Gatekeeper asks the person to allow it in System Settings > Privacy & Security):
#   MACOS_SIGN_IDENTITY   "Developer ID Application: NAME (TEAMID)"
#   MACOS_NOTARY_PROFILE  a notarytool keychain profile (xcrun notarytool store-credentials)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VENV=build/package/venv-macos
say() { printf '==> %s\n' "$*"; }

[ "$(uname)" = Darwin ] || { echo "build.sh: run this on macOS" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
  say "build environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
py=$VENV/bin/python
say "holodesk's runtime dependencies and PyInstaller"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet --upgrade . -r packaging/requirements-build.txt
if "$py" -c "import keyrings.alt" 2>/dev/null; then
  echo "build.sh: keyrings.alt is in $VENV; it must never ship. Delete the folder." >&2
  exit 1
fi
version=$("$py" -c "import importlib.metadata as m; print(m.version('holodesk'))")
arch=$(uname -m)
say "freezing holodesk $version ($arch)"
"$py" -m PyInstaller --noconfirm --log-level WARN --distpath build/package/dist-macos \
  --workpath build/package/work-macos packaging/holodesk.spec
app=build/package/dist-macos/holodesk.app
"$app/Contents/MacOS/holodesk" --help >/dev/null

if [ -n "${MACOS_SIGN_IDENTITY:-}" ]; then
  say "signing with $MACOS_SIGN_IDENTITY"
  codesign --force --deep --options runtime --timestamp --sign "$MACOS_SIGN_IDENTITY" "$app"
fi
mkdir -p dist
dmg=dist/holodesk-$version-macos-$arch.dmg
stage=build/package/dmg
rm -rf "$stage" "$dmg"
mkdir -p "$stage"
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
say "disk image $dmg"
hdiutil create -volname "holodesk $version" -srcfolder "$stage" -ov -format UDZO "$dmg"
if [ -n "${MACOS_SIGN_IDENTITY:-}" ] && [ -n "${MACOS_NOTARY_PROFILE:-}" ]; then
  say "notarizing"
  xcrun notarytool submit "$dmg" --keychain-profile "$MACOS_NOTARY_PROFILE" --wait
  xcrun stapler staple "$dmg"
fi
say "done: $dmg"
