#!/usr/bin/env bash
# Installs what memlife needs on Debian (apt for the C++ side, pip for
# PyTorch and pytest) and builds it into build/. Safe to run again: packages
# already present are not touched, and the build is incremental.
#
#   scripts/setup.sh [--deps-only] [--preset default|asan|release]
#
# Environment: MEMLIFE_JOBS (parallel build jobs, default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=default
build=1
while (($#)); do
  case "$1" in
    --deps-only) build=0 ;;
    --preset) preset="$2"; shift ;;
    *) echo "setup.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "setup.sh: $*" >&2; }

apt_packages=(
  build-essential cmake ninja-build g++ clang pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libunwind-dev libdw-dev libelf-dev
  python3 python3-dev python3-venv
  chromium
)
# pip comes from apt only when the python3 on PATH has none.
python3 -m pip --version >/dev/null 2>&1 || apt_packages+=(python3-pip)

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "apt packages present"
fi

if python3 -c 'import torch, pytest, numpy' >/dev/null 2>&1; then
  log "torch $(python3 -c 'import torch; print(torch.__version__)') present"
else
  log "installing torch, pytest and numpy with pip (the CUDA wheel; it also runs on CPU)"
  # Debian's own python3 refuses pip installs without this (PEP 668).
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q torch pytest numpy
fi

# The build backend of `pip install --no-build-isolation .` (README,
# Installing; the install.pip test).
if python3 -c 'import scikit_build_core' >/dev/null 2>&1; then
  log "scikit-build-core present"
else
  log "installing scikit-build-core with pip"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q 'scikit-build-core>=0.10'
fi

# The e2e tests check every report they make against the report's schema
# (lib/analysis/report.schema.json).
if python3 -c 'import jsonschema' >/dev/null 2>&1; then
  log "jsonschema present"
else
  log "installing jsonschema with pip"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q 'jsonschema>=4.18'
fi

# The frameworks of the program corpus (tests/corpus), held to the torch
# just installed so pip never replaces it.
# Present means every pin of requirements.txt installed at its version.
corpus_pins_met() {
  python3 - tests/corpus/requirements.txt <<'PY'
import importlib.metadata as md, sys
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, version = line.partition("==")
    try:
        if md.version(name) != version:
            sys.exit(1)
    except md.PackageNotFoundError:
        sys.exit(1)
PY
}
if corpus_pins_met; then
  log "corpus frameworks present"
else
  log "installing the corpus frameworks (tests/corpus/requirements.txt)"
  constraint="$(mktemp)"
  python3 -c 'import importlib.metadata as m; print("torch==" + m.version("torch"))' >"$constraint"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q -r tests/corpus/requirements.txt -c "$constraint"
  rm -f "$constraint"
fi

if ((build)); then
  jobs="${MEMLIFE_JOBS:-$(nproc)}"
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs"
  log "built preset $preset"
fi
