#!/usr/bin/env bash
# Make sure a Go toolchain that can build this module is available.
#
# 1. `go` on PATH (or /usr/local/go/bin/go): use it.
# 2. Otherwise install Debian's golang-go. Bookworm's own is 1.19, too old to
#    switch toolchains, so bookworm-backports is added when needed and the
#    newest golang-go (>= 1.21) is taken from there.
# 3. With GOTOOLCHAIN=auto (scripts/env.sh) the go command then downloads the
#    toolchain go.mod asks for from the Go module proxy (golang.org/toolchain).
#    If no go >= 1.21 could be installed from apt, that same toolchain module is
#    fetched from the proxy directly and unpacked into /usr/local/go.
# 4. Installs gcc + libc6-dev when missing: `go test -race` needs cgo.
# Prints what it did; exits non-zero if it cannot provide a working go.
set -euo pipefail
PITBOSS_LOG_TAG=go
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
cd "$PITBOSS_ROOT"

want="$(awk '$1 == "go" {print $2; exit}' go.mod)"
want_tc="$(awk '$1 == "toolchain" {print $2; exit}' go.mod)"   # e.g. go1.26.8 (optional)
[ -n "$want" ] || die "no go directive in go.mod"
log "go.mod wants go $want${want_tc:+ (toolchain $want_tc)}"

# go_minor VERSION_OUTPUT -> "1 21" style major/minor
go_mm() { sed -nE 's/.*go([0-9]+)\.([0-9]+).*/\1 \2/p' | head -n 1; }
can_switch() { # go binary -> true if >= 1.21 (knows GOTOOLCHAIN)
  local mm
  mm="$(GOTOOLCHAIN=local "$1" version 2>/dev/null | go_mm)"
  [ -n "$mm" ] || return 1
  local maj min
  read -r maj min <<<"$mm"
  [ "$maj" -gt 1 ] || [ "$min" -ge 21 ]
}

install_from_apt() {
  command -v apt-get >/dev/null 2>&1 || return 1
  apt_update
  local codename cand
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  cand="$(apt-cache policy golang-go 2>/dev/null | awk '/Candidate:/ {print $2}')"
  log "apt candidate for golang-go: ${cand:-none}"
  # Debian's golang-go versions look like 2:1.19~1; keep the 1.NN part.
  if [ -n "$codename" ] && ! printf '%s' "$cand" | grep -qE ':1\.(2[1-9]|[3-9][0-9])'; then
    if ! grep -rqsE "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding ${codename}-backports to apt sources (/etc/apt/sources.list.d/pitboss-backports.sources)"
      printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' "Suites: ${codename}-backports" \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
        | as_root tee /etc/apt/sources.list.d/pitboss-backports.sources >/dev/null
      apt_update force
    fi
    cand="$(apt-cache policy -t "${codename}-backports" golang-go 2>/dev/null | awk '/Candidate:/ {print $2}')"
    log "apt candidate for golang-go from ${codename}-backports: ${cand:-none}"
    log "apt-get install -t ${codename}-backports golang-go"
    apt_get_install -t "${codename}-backports" golang-go || return 1
  else
    log "apt-get install golang-go"
    apt_get_install golang-go || return 1
  fi
  hash -r
  command -v go >/dev/null 2>&1
}

# Fetch golang.org/toolchain (what GOTOOLCHAIN=auto itself downloads) from the
# module proxy and unpack it as /usr/local/go.
install_from_proxy() {
  local ver="${want_tc:-go$want}" arch proxy url tmp
  case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
  proxy="${GOPROXY:-https://proxy.golang.org}"; proxy="${proxy%%,*}"; proxy="${proxy%%|*}"
  [ "$proxy" = direct ] || [ "$proxy" = off ] && proxy=https://proxy.golang.org
  url="$proxy/golang.org/toolchain/@v/v0.0.1-$ver.linux-$arch.zip"
  command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
  command -v unzip >/dev/null 2>&1 || apt_install unzip
  tmp="$(mktemp -d)"
  log "downloading $url"
  curl -fsSL --retry 3 --max-time 600 -o "$tmp/tc.zip" "$url" || { rm -rf "$tmp"; return 1; }
  unzip -q "$tmp/tc.zip" -d "$tmp/x" || { rm -rf "$tmp"; return 1; }
  as_root rm -rf /usr/local/go
  as_root mv "$tmp/x/golang.org/toolchain@v0.0.1-$ver.linux-$arch" /usr/local/go
  as_root chmod -R a+rX /usr/local/go
  rm -rf "$tmp"
  export PATH="/usr/local/go/bin:$PATH"
  hash -r
  log "installed /usr/local/go from the module proxy; add /usr/local/go/bin to PATH (scripts/env.sh does)"
}

if command -v go >/dev/null 2>&1; then
  log "found $(command -v go): $(GOTOOLCHAIN=local go version)"
else
  log "no go on PATH or in /usr/local/go/bin; installing one"
  if install_from_apt && can_switch "$(command -v go)"; then
    log "installed $(command -v go): $(GOTOOLCHAIN=local go version)"
  else
    log "no go >= 1.21 from apt; fetching the toolchain module from the Go proxy instead"
    install_from_proxy || die "could not install a Go toolchain"
  fi
fi

if ! can_switch "$(command -v go)"; then
  # e.g. an old distro go found on PATH: it cannot honour GOTOOLCHAIN.
  mm="$(GOTOOLCHAIN=local go version | go_mm)"
  log "go on PATH ($mm) predates toolchain switching; installing go $want into /usr/local/go"
  install_from_proxy || die "could not install a Go toolchain"
fi

# `go test -race` needs cgo, i.e. a C compiler and libc headers.
if ! command -v "$(go env CC 2>/dev/null || echo gcc)" >/dev/null 2>&1 || [ ! -e /usr/include/stdlib.h ]; then
  log "installing a C toolchain for cgo (needed by go test -race)"
  apt_install gcc libc6-dev
fi

# The toolchain and module downloads are HTTPS: a bare machine lacks the CA bundle.
if command -v dpkg-query >/dev/null 2>&1 && [ ! -e /etc/ssl/certs/ca-certificates.crt ]; then
  apt_install ca-certificates
fi

# In the module, GOTOOLCHAIN=auto (env.sh) selects/downloads the toolchain go.mod asks for.
if ! out="$(timeout 900 go version 2>&1)"; then
  printf '%s\n' "$out" >&2
  die "go could not provide the toolchain go.mod asks for (GOTOOLCHAIN=$GOTOOLCHAIN)"
fi
printf '%s\n' "$out" | grep -v '^go version' | sed 's/^/[go] /' >&2 || true
log "using $(printf '%s\n' "$out" | grep '^go version' | tail -n 1) (GOTOOLCHAIN=$GOTOOLCHAIN)"
