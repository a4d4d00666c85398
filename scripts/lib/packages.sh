# Sourced by kiln's scripts. ensure_packages WHO PKG...: installs the Debian packages that are
# not installed yet (apt-get update only then); WHO prefixes the message. `npm` counts as
# present when an npm command exists (nodesource's nodejs bundles it).
ensure_packages() {
  local who=$1 p
  shift
  local missing=()
  for p in "$@"; do
    if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$who: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
