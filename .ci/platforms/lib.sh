# Shared by the scripts in this directory (sourced, not run).
# Every path is computed from this file's location, so a clone anywhere works.

PLAT_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$PLAT_SCRIPTS/../.." && pwd)
# Everything built or downloaded: tools (zig venv, wazero), stubs, the Wine
# prefix, logs, and one Cargo target dir per target triple (see run).
PLAT_DIR=$REPO/target/platforms
PLAT_BIN=$PLAT_DIR/bin
ZIG_VENV=$PLAT_DIR/zig-venv
WASMTIME_VENV=$PLAT_DIR/wasmtime-venv
export WINEPREFIX=${FASTNOW_WINEPREFIX:-$PLAT_DIR/wine-prefix}
export WINEDEBUG=${WINEDEBUG:--all}
