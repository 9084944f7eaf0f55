#!/usr/bin/env bash
# build-park.sh [CLIENT]: runs in the popup that @park-key opens while park's binary is not
# installed (park.tmux binds it so when the plugin is a clone of park's repo, as TPM makes).
#
#   * without cargo (on PATH or in ~/.cargo/bin): says what to install (rustup), or which release
#     tarball holds a static park, and builds nothing;
#   * else asks "Build it now with cargo? [y/N]"; anything but y/yes builds nothing;
#   * on y: cargo install --locked --path <repo>/companion --root ~/.local [@park-build-args],
#     cargo's output shown here and kept in ${XDG_STATE_HOME:-~/.local/state}/park/build.log;
#   * success: loads the plugin again (keys, status line), as TPM would, and says so on CLIENT;
#   * failure: says so and where the log is; nothing was changed, so the key offers a retry.
# It never writes a tmux option: whatever the user set stays as it was.
client="${1:-}"
CURRENT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR
. "$CURRENT_DIR/helpers.sh"
PLUGIN_DIR="$(cd "$CURRENT_DIR/.." && pwd)"
SOURCE_DIR="$(cd "$PLUGIN_DIR/.." && pwd)"
ROOT="$HOME/.local"
LOG="${XDG_STATE_HOME:-$HOME/.local/state}/park/build.log"
KEY="$(get_tmux_option @park-key P)"
PREFIX="$(get_tmux_option prefix C-b)"

# tell MESSAGE: MESSAGE on the status line of the client that pressed the key.
tell() {
  local msg
  msg="$(fmt_escape "$1")"
  if [ -n "$client" ]; then
    tmux display-message -d 8000 -c "$client" "$msg" 2>/dev/null && return
  fi
  tmux display-message -d 8000 "$msg" 2>/dev/null || true
}

pause() {
  printf '\nPress any key to close.'
  read -r -s -n 1 _ || true
}

if ! cargo="$(find_cargo)"; then
  cat <<EOF
park's binary is not installed, and cargo (Rust's build tool) was not found
(looked on PATH and in ~/.cargo/bin), so park cannot be built here. Either:

  * install Rust with rustup (https://rustup.rs):
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh
    then press $PREFIX $KEY again to build park; or
  * put the static park of a release tarball in ~/.local/bin (the tarball is
    park-<version>-x86_64-unknown-linux-musl.tar.gz; scripts/release builds it)
    and press $PREFIX $KEY again (or set @park-bin to it).
EOF
  pause
  exit 0
fi

printf "park's binary is not installed. Build it now with cargo? [y/N] "
answer=""
read -r answer || true
case "$answer" in
  y | Y | yes | Yes | YES) ;;
  *) exit 0 ;;
esac

extra="$(get_tmux_option @park-build-args "")"
# shellcheck disable=SC2206 # @park-build-args is split into words on purpose
args=(install --locked --path "$SOURCE_DIR/companion" --root "$ROOT" $extra)
mkdir -p "$(dirname "$LOG")"
printf '\n$ %s %s\n\n' "$cargo" "${args[*]}"
{
  printf '# %s\n$ %s %s\n' "$(date)" "$cargo" "${args[*]}"
} >"$LOG"
"$cargo" "${args[@]}" 2>&1 | tee -a "$LOG"
rc="${PIPESTATUS[0]}"

bin="$ROOT/bin/park"
if [ "$rc" = 0 ] && [ -x "$bin" ] && version="$("$bin" -V 2>/dev/null)"; then
  # Load the plugin again, run by the server as TPM runs it: find_park_bin now finds
  # ~/.local/bin/park, so the key opens the picker and the status line is set up.
  tmux run-shell "$(fmt_escape "$(sh_quote "$PLUGIN_DIR/park.tmux")")"
  if tmux list-keys -T prefix "$KEY" 2>/dev/null | grep -q ' pick --pane '; then
    printf '\nInstalled %s: %s\nThe plugin is loaded: %s %s opens park'\''s picker.\n' \
      "$version" "$bin" "$PREFIX" "$KEY"
    pause
    tell "park: installed $version in $ROOT/bin; $PREFIX $KEY opens the picker"
  else
    printf '\nInstalled %s: %s\nbut the plugin did not pick it up: set -g @park-bin %s in ~/.tmux.conf.\n' \
      "$version" "$bin" "$bin"
    pause
    tell "park: installed $bin, but the plugin did not load it (set @park-bin)"
  fi
  exit 0
fi

printf '\nThe build FAILED (cargo exited %s). Nothing was changed.\nLog: %s\nPress %s %s to try again.\n' \
  "$rc" "$LOG" "$PREFIX" "$KEY"
pause
tell "park: build failed (log: $LOG); $PREFIX $KEY retries"
exit 0
