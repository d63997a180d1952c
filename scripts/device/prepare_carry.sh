#!/usr/bin/env bash
# Here, before the device call: header-only dependencies and their CMake
# package files go to .carry/ (ignored by git), named in the call's carry.
set -e
cd "$(git rev-parse --show-toplevel)"
EX=$(git rev-parse --git-path info/exclude); mkdir -p "$(dirname "$EX")"; touch "$EX"; grep -qx /.carry/ "$EX" || echo /.carry/ >> "$EX"
mkdir -p "$(dirname "$(git rev-parse --git-path info/exclude)")"
rm -rf .carry && mkdir -p .carry/include .carry/share/cmake
cp -r /usr/include/nlohmann /usr/include/CLI .carry/include/
for d in /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json /usr/share/cmake/CLI11 /usr/lib/cmake/CLI11 /usr/share/CLI11 /usr/lib/x86_64-linux-gnu/cmake/CLI11 /usr/lib/x86_64-linux-gnu/cmake/nlohmann_json; do
  [ -d "$d" ] && cp -r "$d" .carry/share/cmake/
done
du -sh .carry; ls .carry/share/cmake
