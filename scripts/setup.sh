#!/usr/bin/env bash
# Installs the Debian packages kura needs. Usage: scripts/setup.sh [build|test|bench|all]
#   build: compiler, CMake and the libraries kura links (default)
#   test:  build + cmocka, clang (libFuzzer, sanitizers), chromium + chromedriver + selenium
#          (tests/browser: the heat page in a headless browser)
#   bench: build + the benchmark peers (RocksDB, LevelDB, LMDB, SQLite) and matplotlib
#          (scripts/plot_bench.py draws the charts of docs/BENCHMARKS.md)
#   all:   everything
# Only missing packages are installed; run as root or with sudo available.
set -euo pipefail

what=${1:-build}
pkgs=(build-essential cmake pkg-config liblz4-dev zlib1g-dev libxxhash-dev libjansson-dev libyajl-dev libssl-dev libmicrohttpd-dev libdeflate-dev libunistring-dev
      libcairo2-dev libcurl4-openssl-dev)
case "$what" in
  build) ;;
  test)  pkgs+=(libcmocka-dev clang libclang-rt-14-dev python3 python3-pytest python3-boto3 awscli
                chromium chromium-driver python3-selenium) ;;
  bench) pkgs+=(librocksdb-dev libleveldb-dev liblmdb-dev libsqlite3-dev
                python3-matplotlib) ;;
  all)   pkgs+=(libcmocka-dev clang libclang-rt-14-dev python3 python3-pytest python3-boto3 awscli
                chromium chromium-driver python3-selenium
                librocksdb-dev libleveldb-dev liblmdb-dev libsqlite3-dev python3-matplotlib) ;;
  *) echo "usage: $0 [build|test|bench|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
