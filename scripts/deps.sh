#!/usr/bin/env bash
# Installs the Debian packages faultwin needs. A no-op (no apt call at all)
# when every package is already installed, so a warm `make deps` takes seconds.
set -euo pipefail

packages=(
  # the harness and the reference supervisor at run time
  nftables iproute2 xvfb openbox x11-utils tar util-linux procps
  # CRIU 4.2 build dependencies (see scripts/install-criu.sh)
  build-essential pkgconf libbsd-dev libcap-dev libgnutls28-dev libnet1-dev
  libnftables-dev libnl-3-dev libprotobuf-c-dev libprotobuf-dev
  protobuf-c-compiler protobuf-compiler uuid-dev python3-protobuf
  xz-utils ca-certificates
  # headless report checks
  chromium
  # the podman windows: podman 4.3 with runc (crun cannot run here), conmon,
  # netavark and the iptables it drives, and a static busybox for the image
  podman runc conmon netavark aardvark-dns iptables busybox-static
  # the containerd windows: containerd 1.6 with ctr and its runc v2 shim
  # (Debian starts no daemon without systemd; each run starts its own)
  containerd
  # containerd's CRI plugin (containerd-cri windows): CNI's bridge plugin
  containernetworking-plugins
  # the docker windows: dockerd 20.10 (checkpoints behind --experimental)
  # with the containerd and runc above; each run starts its own daemon
  docker.io
  # ssh-keygen signs and verifies sealed sessions (faultwin sign, --signers)
  openssh-client
  # make image: the Debian rootfs its base is imported from (deploy/image)
  debootstrap
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} Debian packages present"
  exit 0
fi

if [[ $(id -u) != 0 ]]; then
  echo "deps: missing packages: ${missing[*]}" >&2
  echo "deps: run as root: sudo make deps" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A package's maintainer scripts must not start its service (docker.io's
# would start the host's dockerd, with its bridge and iptables rules):
# policy-rc.d answering 101 forbids every start during the install.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${#missing[@]} packages"
