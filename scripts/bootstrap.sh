#!/usr/bin/env bash
# The single set-up entry point of the project.
#
#   bash scripts/bootstrap.sh demo [args]         set up, then run examples/quickstart.py
#                                                 (lazyarray) and examples/demo.py [args]
#                                                 (kernelcore)
#   bash scripts/bootstrap.sh test [pytest args]  set up, then run the fast test suite
#                                                 (and its NumPy-semantics tests once
#                                                 more on the host tier)
#
# Set-up: a Python >= 3.10, a virtual environment in .venv with the project
# installed in editable mode (skipped when setup.cfg/pyproject.toml are
# unchanged), and a working OpenCL device (Debian's PoCL is installed through
# apt when nothing else works). Safe to run again; re-runs are quick.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { echo "[bootstrap] $*"; }
die() { echo "[bootstrap] ERROR: $*" >&2; exit 1; }

usage() {
    echo "usage: bash scripts/bootstrap.sh demo [args]" >&2
    echo "       bash scripts/bootstrap.sh test [extra pytest args]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
ACTION="$1"
shift
case "$ACTION" in
    demo|test) ;;
    *) usage ;;
esac

export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

# ---------------------------------------------------------------- root / apt
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        return 1
    fi
}

APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || { log "apt-get not found; cannot install $*"; return 1; }
    if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
        log "not root and no sudo; cannot install $*"
        return 1
    fi
    log "apt-get install $*"
    if [ "$APT_UPDATED" -eq 0 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
        APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || return 1
}

# ------------------------------------------------------------ (a) python >= 3.10
py_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1; }

PY=""
for cand in ${PYTHON:-} python3 python3.13 python3.12 python3.11 python3.10 python; do
    if command -v "$cand" >/dev/null 2>&1 && py_ok "$cand"; then
        PY="$(command -v "$cand")"
        break
    fi
done
[ -n "$PY" ] || die "no Python >= 3.10 found (tried \$PYTHON, python3, python3.1x, python)"

# ------------------------------------------------------------------- (b) venv
VENV="$ROOT/.venv"
VPY="$VENV/bin/python"

venv_ok() { [ -x "$VPY" ] && py_ok "$VPY" && "$VPY" -c 'import pip' >/dev/null 2>&1; }

make_venv() { rm -rf "$VENV"; "$PY" -m venv "$VENV" >/dev/null 2>&1 && venv_ok; }

if ! venv_ok; then
    log "creating .venv with $PY ($("$PY" -c 'import platform; print(platform.python_version())'))"
    if ! make_venv; then
        # Debian ships venv/ensurepip separately (python3-venv / python3.X-venv).
        pyver="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        apt_install python3-venv || true
        if ! make_venv; then
            apt_install "python${pyver}-venv" || true
            make_venv || die "cannot create a virtual environment with $PY; install python3-venv (apt-get install python3-venv)"
        fi
    fi
fi

# ---------------------------------------------------------- (c) pip install -e
STAMP="$VENV/.bootstrap-stamp"
want_stamp="$( { echo "$ROOT"; cat setup.cfg pyproject.toml; } | "$VPY" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"

# Top-level packages present in the checkout must be importable from outside
# the checkout (an editable install made before a package existed misses it).
packages_importable() {
    local pkgs=() p
    for p in kernelcore lazyarray; do
        [ -f "$ROOT/$p/__init__.py" ] && pkgs+=("$p")
    done
    [ ${#pkgs[@]} -eq 0 ] && return 0
    (cd / && "$VPY" -c '
import importlib.util, os, sys
root = os.path.realpath(sys.argv[1])
for name in sys.argv[2:]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not os.path.realpath(spec.origin).startswith(root + os.sep):
        sys.exit(1)
' "$ROOT" "${pkgs[@]}") >/dev/null 2>&1
}

# demo needs what running needs; test adds the test extra (pytest, MPI, Dask,
# Sphinx, mypy, ...). The stamp records which was installed.
if [ "$ACTION" = test ]; then EXTRA="[test]"; else EXTRA=""; fi
have_stamp="$(cat "$STAMP" 2>/dev/null || true)"
stamp_ok() {
    case "$have_stamp" in
        "$want_stamp test") return 0 ;;
        "$want_stamp run") [ -z "$EXTRA" ] ;;
        *) return 1 ;;
    esac
}
if stamp_ok && packages_importable; then
    log "dependencies up to date"
else
    log "installing the project and its dependencies into .venv (pip install -e '.$EXTRA')"
    rm -f "$STAMP"
    PIP_LOG="$VENV/.bootstrap-pip.log"
    if ! "$VPY" -m pip install -q -e ".$EXTRA" >"$PIP_LOG" 2>&1; then
        grep -v "^WARNING: Location '.*' is ignored" "$PIP_LOG" | tail -n 40 >&2
        die "pip install -e '.$EXTRA' failed (full log: $PIP_LOG)"
    fi
    echo "$want_stamp $([ -n "$EXTRA" ] && echo test || echo run)" > "$STAMP"
fi

# bytecode of the project's own modules, as a regular (non-editable) install
# writes it: without it every fresh process compiles lazyarray's sources again
# (about 0.1 s of `import lazyarray`) where PYTHONDONTWRITEBYTECODE is set
"$VPY" -m compileall -q -j 0 "$ROOT/lazyarray" "$ROOT/kernelcore" >/dev/null \
    || log "compiling bytecode failed (imports still work, only slower)"

export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"

# ----------------------------------------------------------------- (d) OpenCL
PROBE_ERR="$(mktemp)"
PROBE_CUR="$(mktemp)"
trap 'rm -f "$PROBE_ERR" "$PROBE_CUR"' EXIT

probe() {
    # probe [VAR=value ...]: run the probe with extra environment variables;
    # prints the device name on success, collects the reasons in $PROBE_ERR.
    local t=() rc=0
    command -v timeout >/dev/null 2>&1 && t=(timeout 300)
    ${t[@]+"${t[@]}"} env "$@" "$VPY" "$ROOT/scripts/probe_opencl.py" 2>"$PROBE_CUR" || rc=$?
    { echo "with ${*:-the environment as given}:"; sed 's/^/  /' "$PROBE_CUR"; } >>"$PROBE_ERR"
    return "$rc"
}

SYS_VENDORS=/etc/OpenCL/vendors
ocl_dev=""
if ocl_dev="$(probe)"; then
    :
elif ocl_dev="$(probe OCL_ICD_VENDORS="$SYS_VENDORS")"; then
    export OCL_ICD_VENDORS="$SYS_VENDORS"
else
    log "no working OpenCL device yet; installing PoCL (pocl-opencl-icd)"
    if apt_install pocl-opencl-icd ocl-icd-libopencl1 \
            && ocl_dev="$(probe OCL_ICD_VENDORS="$SYS_VENDORS")"; then
        export OCL_ICD_VENDORS="$SYS_VENDORS"
    else
        echo "[bootstrap] ERROR: no OpenCL device can build and run a kernel." >&2
        echo "[bootstrap] probe output:" >&2
        sed 's/^/[bootstrap]   /' "$PROBE_ERR" >&2
        echo "[bootstrap] Install an OpenCL driver (on Debian: apt-get install pocl-opencl-icd ocl-icd-libopencl1)" >&2
        echo "[bootstrap] and check with: .venv/bin/python scripts/probe_opencl.py" >&2
        exit 1
    fi
fi
log "OpenCL OK: $ocl_dev${OCL_ICD_VENDORS:+ (OCL_ICD_VENDORS=$OCL_ICD_VENDORS)}"
rm -f "$PROBE_ERR" "$PROBE_CUR"
trap - EXIT

# OpenBLAS lets the C target's CBLAS example (tests/kernelcore/kernel/test_callables.py)
# run; only the tests need it. (Debian puts cblas.h under /usr/include/<triplet>/.)
has_cblas() {
    local h
    for h in /usr/include/cblas.h /usr/include/*/cblas.h; do
        [ -e "$h" ] && return 0
    done
    return 1
}
if [ "$ACTION" = test ] && ! has_cblas; then
    apt_install libopenblas-dev || log "OpenBLAS not installed; its tests will be skipped"
fi

# ---------------------------------------------------------------- (f) action
case "$ACTION" in
    demo)
        log "running examples/quickstart.py (lazyarray)"
        "$VPY" examples/quickstart.py || die "examples/quickstart.py failed (above)"
        echo
        log "running examples/demo.py (kernelcore)"
        exec "$VPY" examples/demo.py "$@"
        ;;
    test)
        xdist=()
        if "$VPY" -c 'import xdist' >/dev/null 2>&1; then
            xdist=(-n 2)
        fi
        # Run all of tests/ unless the extra arguments name test paths themselves.
        where=(tests)
        whole=1
        for arg in "$@"; do
            [ -e "${arg%%::*}" ] && { where=(); whole=0; break; }
        done
        log "checking style (ruff), types (mypy) and the import contracts (.importlinter)"
        "$VPY" -m ruff check . || die "ruff found problems (above)"
        "$VPY" -m mypy || die "mypy found problems (above)"
        "$(dirname "$VPY")/lint-imports" || die "an import breaks a contract of .importlinter (above)"
        log "running the test suite"
        status=0
        "$VPY" -m pytest -q --durations=30 -m "not slow" ${xdist[@]+"${xdist[@]}"} ${where[@]+"${where[@]}"} "$@" \
            || status=$?
        # The suite computes on the device tier (tests/conftest.py); NumPy's
        # semantics are checked once more with NumPy computing them, on the host
        # tier (the whole suite only; exit status 5: the extra arguments
        # selected none of these tests)
        if [ "$whole" -eq 1 ]; then
            log "running the NumPy-semantics tests, the fuzzer and the examples on the host tier"
            LAZYARRAY_TIER=host "$VPY" -m pytest -q -m "not slow" ${xdist[@]+"${xdist[@]}"} \
                tests/lazyarray/numpy_compat tests/lazyarray/test_fuzz.py \
                tests/project/test_examples.py "$@" || { rc=$?; [ "$rc" -eq 5 ] || status=$rc; }
        fi
        exit "$status"
        ;;
esac
