#!/usr/bin/env bash
# What `sparti demo`'s tests need on a Debian machine, installed only when
# missing (idempotent):
# - xvfb (Xvfb): a virtual X display, for the live-window test;
# - x11-apps (xwd): the screenshot of that display;
# - netpbm (xwdtopnm, pnmtopng): the screenshot converted to PNG;
# - libx11-6, libxcursor1: what the window (minifb, through x11-dl) opens
#   at run time. Building needs no X headers, only a C compiler (minifb
#   compiles one portable C file), which the Rust toolchain's machine has.
set -euo pipefail

missing=()
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
command -v xwd >/dev/null 2>&1 || missing+=(x11-apps)
{ command -v xwdtopnm >/dev/null 2>&1 && command -v pnmtopng >/dev/null 2>&1; } || missing+=(netpbm)
# The library list is read whole first: `ldconfig -p | grep -q` could fail
# under pipefail when grep stops reading early.
libs="$(ldconfig -p 2>/dev/null || true)"
grep -q 'libX11\.so\.6 ' <<<"$libs" || missing+=(libx11-6)
grep -q 'libXcursor\.so\.1 ' <<<"$libs" || missing+=(libxcursor1)

if [ ${#missing[@]} -eq 0 ]; then
    echo "demo deps: all present"
    exit 0
fi
echo "demo deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
