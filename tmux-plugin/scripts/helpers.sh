#!/usr/bin/env bash
# Helpers shared by the park tmux plugin scripts (sourced, not run).
#
# Contract: options are only ever READ with a default here; the plugin never writes a default
# into a user option, so whatever the user set (before or after loading) wins.

# get_tmux_option NAME DEFAULT: the global value of NAME, or DEFAULT when unset or empty.
get_tmux_option() {
  local value
  value="$(tmux show-option -gqv "$1")"
  if [ -n "$value" ]; then
    printf '%s\n' "$value"
  else
    printf '%s\n' "$2"
  fi
}

# sh_quote WORD: WORD as one POSIX-shell single-quoted word ('it'\''s').
sh_quote() {
  local q="'\\''"
  printf "'%s'" "${1//\'/$q}"
}

# fmt_escape TEXT: TEXT with every # doubled, so a format expansion (run-shell,
# display-message) gives TEXT back unchanged.
fmt_escape() {
  printf '%s' "${1//\#/##}"
}

# replace_all TEXT FROM TO: TEXT with every FROM replaced by TO, all taken literally
# (bash 5.2's patsub_replacement would otherwise turn & in TO into the match).
replace_all() {
  printf '%s' "${1//"$2"/"$3"}"
}

# find_park_bin: prints the park binary to use: @park-bin (a path, ~ expanded, or a command
# name looked up on PATH), else `park` on PATH. Returns 1 when there is none.
find_park_bin() {
  local want
  want="$(get_tmux_option @park-bin "")"
  if [ -z "$want" ]; then
    type -P park
    return
  fi
  # shellcheck disable=SC2088 # a literal "~/" from the option, expanded here
  case "$want" in
    "~/"*) want="$HOME/${want#"~/"}" ;;
  esac
  case "$want" in
    */*) [ -f "$want" ] && [ -x "$want" ] && printf '%s\n' "$want" ;;
    *) type -P "$want" ;;
  esac
}
