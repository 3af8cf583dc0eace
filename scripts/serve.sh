#!/usr/bin/env bash
# Installs what is missing, builds the server (Release, in build-release/) and runs it in the
# foreground: port 8000, data in ./kumo-data. Extra arguments go to `kumo serve`, and a
# --port, --data-dir or --in-memory given there replaces the default.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/install-deps.sh"

cmake -S "$root" -B "$root/build-release" \
  -DCMAKE_BUILD_TYPE=Release -DKUMO_SANITIZE=OFF -DKUMO_TESTS=OFF
cmake --build "$root/build-release" -j"$(nproc)" --target kumo

port=(--port 8000)
data=(--data-dir ./kumo-data)
for arg in "$@"; do
  case "$arg" in
    --port|--port=*|-port) port=() ;;
    --data-dir|--data-dir=*|--in-memory|-dbPath|-inMemory) data=() ;;
  esac
done

exec "$root/build-release/kumo" serve "${port[@]}" "${data[@]}" "$@"
